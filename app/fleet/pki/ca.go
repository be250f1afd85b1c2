package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
)

// caCommonName is the subject of the hub CA.
const caCommonName = "netmon hub CA"

// loadOrCreateCA loads ca.crt and ca.key, or creates both when neither
// exists. Anything in between is an error: agents pinned the CA, and a
// new one would lock every one of them out.
func (a *Authority) loadOrCreateCA() error {
	certPath := filepath.Join(a.cfg.Dir, caCertFile)
	keyPath := filepath.Join(a.cfg.Dir, caKeyFile)
	haveCert, err := exists(certPath)
	if err != nil {
		return err
	}
	haveKey, err := exists(keyPath)
	if err != nil {
		return err
	}
	switch {
	case !haveCert && !haveKey:
		return a.createCA(certPath, keyPath)
	case !haveKey:
		return fmt.Errorf("load CA: %s exists but %s is missing; restore it from a backup (agents pinned this CA) or remove both to create a new CA", certPath, keyPath)
	case !haveCert:
		return fmt.Errorf("load CA: %s exists but %s is missing; restore it from a backup (agents pinned this CA) or remove both to create a new CA", keyPath, certPath)
	}
	return a.loadCA(certPath, keyPath)
}

func (a *Authority) loadCA(certPath, keyPath string) error {
	cert, err := readCert(certPath)
	if err != nil {
		return fmt.Errorf("load CA: %w", err)
	}
	if !cert.IsCA || !cert.BasicConstraintsValid || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return fmt.Errorf("load CA: %s is not a CA certificate", certPath)
	}
	key, err := readKey(keyPath)
	if err != nil {
		return fmt.Errorf("load CA: %w", err)
	}
	if !samePublicKey(cert.PublicKey, key.Public()) {
		return fmt.Errorf("load CA: %s does not belong to %s; restore the matching pair (agents pinned this CA)", keyPath, certPath)
	}
	if now := a.now(); !now.Before(cert.NotAfter) {
		return fmt.Errorf("load CA: %s expired on %s; agents must be re-enrolled with a new CA (remove ca.crt and ca.key to create one)", certPath, cert.NotAfter.UTC().Format("2006-01-02"))
	}
	warnIfOpen(a.log, keyPath)
	a.ca, a.caKey = cert, key
	return nil
}

func (a *Authority) createCA(certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate CA key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return err
	}
	now := a.now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: caCommonName},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(a.cfg.CALife),
		IsCA:                  true,
		BasicConstraintsValid: true,
		// The CA signs leaves only; an intermediate it signed by mistake
		// could not sign further.
		MaxPathLen:     0,
		MaxPathLenZero: true,
		KeyUsage:       x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	cert, err := signAndSave(tmpl, tmpl, key, key, certPath, keyPath)
	if err != nil {
		return fmt.Errorf("create CA: %w", err)
	}
	a.ca, a.caKey = cert, key
	a.log.Info("CA created", "path", certPath, "not_after", cert.NotAfter)
	return nil
}

// signAndSave signs tmpl for key with parent/signer, then writes the key
// and the certificate (PEM) and returns the parsed certificate. The key
// goes first: a crash between the two renames leaves a key without a
// certificate, which New reports, rather than a published certificate
// whose key is lost.
func signAndSave(tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, signer crypto.Signer, certPath, keyPath string) (*x509.Certificate, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return nil, fmt.Errorf("sign certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse new certificate: %w", err)
	}
	keyPEM, err := marshalKey(key)
	if err != nil {
		return nil, err
	}
	if err := writeFiles(
		fileContent{keyPath, keyPEM, 0o600},
		fileContent{certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644},
	); err != nil {
		return nil, fmt.Errorf("save: %w", err)
	}
	return cert, nil
}

// readCert parses the first certificate of a PEM file.
func readCert(path string) (*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	b, ok := pemBlock(data, "CERTIFICATE")
	if !ok {
		return nil, fmt.Errorf("read %s: no PEM certificate", path)
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return cert, nil
}

// readKey parses a PEM private key: PKCS#8 (what this package writes),
// SEC 1 EC or PKCS#1 RSA (what openssl and older tools write).
func readKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	b, ok := pemBlock(data, "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY")
	if !ok {
		return nil, fmt.Errorf("read %s: no PEM private key", path)
	}
	var key any
	switch b.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	default:
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("parse %s: unsupported key type %T", path, key)
	}
	return signer, nil
}

// marshalKey encodes key as PKCS#8 PEM.
func marshalKey(key crypto.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// samePublicKey compares two public keys of any supported type.
func samePublicKey(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	switch k := a.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey:
		return k.(equaler).Equal(b)
	}
	return false
}

// warnIfOpen logs when a key file can be read by group or others: not
// fatal (the operator may have reasons), but worth knowing.
func warnIfOpen(log *slog.Logger, path string) {
	fi, err := os.Stat(path)
	if err != nil {
		return
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("private key readable by others", "path", path, "mode", fi.Mode().Perm().String())
	}
}
