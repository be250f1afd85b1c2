package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

const (
	// serverCommonName is the subject of the generated server
	// certificate; clients match the SANs, not the CN.
	serverCommonName = "netmon hub"
	// renewBefore is how long before expiry the generated server
	// certificate is re-issued, so no client ever sees an expired one and
	// a hub that runs for a year renews itself.
	renewBefore = 30 * 24 * time.Hour
	// renewRetry spaces retries of a renewal that failed.
	renewRetry = time.Minute
)

// ServerTLSConfig returns the configuration for the hub's HTTPS listener.
// Use it as is with http.Server.ListenAndServeTLS("", "") or tls.Listen;
// do not fill Certificates, which would bypass GetCertificate for clients
// that send no SNI.
//
// GetCertificate serves the current server certificate, renewing the
// generated one (or re-reading the operator's files) on the way, so the
// hub never needs a restart for its certificate. A client certificate is
// requested but optional (browsers have none); one that is given must
// chain to the hub CA, carry the client-auth usage and name an agent.
func (a *Authority) ServerTLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:       tls.VersionTLS12,
		GetCertificate:   a.getCertificate,
		ClientAuth:       tls.VerifyClientCertIfGiven,
		ClientCAs:        a.caPool,
		VerifyConnection: verifyAgentConnection,
		Time:             a.now,
	}
}

// getCertificate is tls.Config.GetCertificate.
func (a *Authority) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cfg.CertFile != "" {
		a.reloadOperatorLocked()
	} else {
		a.renewIfDueLocked()
	}
	return a.server, nil
}

// verifyAgentConnection is tls.Config.VerifyConnection. The standard
// verification already chained the certificate to ClientCAs, checked its
// dates and refused an explicit non-client usage; this adds what it lets
// through: a certificate with no extended key usage at all, and one whose
// CN names no agent (a CN/agent-id mismatch can only be caught where the
// id is read, so a certificate that names none is refused outright).
// It runs on resumed sessions too, unlike VerifyPeerCertificate.
func verifyAgentConnection(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return nil // a browser or API client; it authenticates otherwise
	}
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return errors.New("client certificate not verified")
	}
	leaf := cs.VerifiedChains[0][0]
	if !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		return fmt.Errorf("client certificate %q lacks the client-auth key usage", leaf.Subject.CommonName)
	}
	if _, ok := ParseAgentCN(leaf.Subject.CommonName); !ok {
		return fmt.Errorf("client certificate CN %q does not name an agent", leaf.Subject.CommonName)
	}
	return nil
}

// loadOrIssueServer loads server.crt/server.key at New, or issues them.
// A damaged or foreign pair is an error like the CA's, since something
// other than this package wrote it; an old one or one for other hosts is
// simply replaced.
func (a *Authority) loadOrIssueServer() error {
	certPath := filepath.Join(a.cfg.Dir, serverCertFile)
	keyPath := filepath.Join(a.cfg.Dir, serverKeyFile)
	haveCert, err := exists(certPath)
	if err != nil {
		return err
	}
	haveKey, err := exists(keyPath)
	if err != nil {
		return err
	}
	if !haveCert && !haveKey {
		return a.issueServer("missing")
	}
	if !haveCert || !haveKey {
		return fmt.Errorf("load server certificate: only one of %s and %s exists; remove it to have a new pair issued", certPath, keyPath)
	}
	cert, err := loadPair(certPath, keyPath)
	if err != nil {
		return fmt.Errorf("load server certificate: %w; remove %s and %s to have a new pair issued", err, certPath, keyPath)
	}
	if err := cert.Leaf.CheckSignatureFrom(a.ca); err != nil {
		return fmt.Errorf("load server certificate: %s was not issued by %s; remove %s and %s to have a new pair issued", certPath, caCertFile, certPath, keyPath)
	}
	warnIfOpen(a.log, keyPath)
	// The chain carries the CA too, so that an agent refusing a swapped
	// hub can name the CA it was shown (TOFU pinning compares CAs).
	cert.Certificate = append(cert.Certificate[:1:1], a.ca.Raw)
	a.server = cert
	switch {
	case a.renewDue(cert.Leaf, a.now()):
		return a.issueServer("expiring")
	case !a.coversHosts(cert.Leaf):
		return a.issueServer("hosts changed")
	}
	return nil
}

// renewDue reports whether leaf is expired or within renewBefore of
// expiry, and a new certificate would last longer (it cannot outlive the
// CA; without this check a CA in its last month would re-issue on every
// handshake).
func (a *Authority) renewDue(leaf *x509.Certificate, now time.Time) bool {
	return !now.Before(leaf.NotAfter.Add(-renewBefore)) && leaf.NotAfter.Before(a.ca.NotAfter)
}

// coversHosts reports whether leaf names exactly the configured hosts.
func (a *Authority) coversHosts(leaf *x509.Certificate) bool {
	if !slices.Equal(leaf.DNSNames, a.dns) || len(leaf.IPAddresses) != len(a.ips) {
		return false
	}
	for i, ip := range a.ips {
		if !ip.Equal(leaf.IPAddresses[i]) {
			return false
		}
	}
	return true
}

// renewIfDueLocked re-issues the generated server certificate when due.
// A failure keeps the current certificate: still valid for up to 30 days,
// which beats refusing every connection.
func (a *Authority) renewIfDueLocked() {
	now := a.now()
	if !a.renewDue(a.server.Leaf, now) || now.Sub(a.lastRenewFail) < renewRetry {
		return
	}
	if err := a.issueServer("expiring"); err != nil {
		a.lastRenewFail = now
		a.log.Error("server certificate renewal failed", "err", err, "not_after", a.server.Leaf.NotAfter)
	}
}

// issueServer creates a server key and certificate signed by the CA,
// writes them to the dir and makes them current.
func (a *Authority) issueServer(reason string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate server key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return err
	}
	now := a.now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: serverCommonName},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              minTime(now.Add(a.cfg.ServerLife), a.ca.NotAfter),
		BasicConstraintsValid: true,
		// ECDSA keys sign the handshake; key encipherment is RSA-only.
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    a.dns,
		IPAddresses: a.ips,
	}
	leaf, err := signAndSave(tmpl, a.ca, key, a.caKey, filepath.Join(a.cfg.Dir, serverCertFile), filepath.Join(a.cfg.Dir, serverKeyFile))
	if err != nil {
		return fmt.Errorf("issue server certificate: %w", err)
	}
	a.server = &tls.Certificate{Certificate: [][]byte{leaf.Raw, a.ca.Raw}, PrivateKey: key, Leaf: leaf}
	a.log.Info("server certificate issued", "reason", reason, "not_after", leaf.NotAfter, "hosts", a.cfg.Hosts, "serial", leaf.SerialNumber.Text(16))
	return nil
}

// loadPair reads a certificate and its key; tls.X509KeyPair checks that
// they belong together.
func loadPair(certPath, keyPath string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", certPath, err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", keyPath, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The error text never includes key material.
		return nil, fmt.Errorf("load pair %s, %s: %w", certPath, keyPath, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("parse %s: %w", certPath, err)
		}
	}
	return &cert, nil
}

// fileStamp identifies the state of the operator's two files.
type fileStamp struct {
	certMod, keyMod   int64
	certSize, keySize int64
}

func stampOf(certPath, keyPath string) (fileStamp, error) {
	c, err := os.Stat(certPath)
	if err != nil {
		return fileStamp{}, err
	}
	k, err := os.Stat(keyPath)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{c.ModTime().UnixNano(), k.ModTime().UnixNano(), c.Size(), k.Size()}, nil
}

// loadOperator loads -tls-cert/-tls-key at New; any problem is an error.
func (a *Authority) loadOperator() error {
	stamp, err := stampOf(a.cfg.CertFile, a.cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("load operator certificate: %w", err)
	}
	cert, err := loadPair(a.cfg.CertFile, a.cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("load operator certificate: %w", err)
	}
	if now := a.now(); !now.Before(cert.Leaf.NotAfter) {
		a.log.Warn("operator server certificate expired", "path", a.cfg.CertFile, "not_after", cert.Leaf.NotAfter)
	}
	a.server, a.opStamp = cert, stamp
	a.log.Info("operator server certificate loaded", "path", a.cfg.CertFile, "not_after", cert.Leaf.NotAfter, "hosts", cert.Leaf.DNSNames)
	return nil
}

// reloadOperatorLocked re-reads the operator's files when they changed.
// A pair caught half-written, or broken, keeps the previous certificate in
// service and is tried again when the files change again.
func (a *Authority) reloadOperatorLocked() {
	stamp, err := stampOf(a.cfg.CertFile, a.cfg.KeyFile)
	if err != nil {
		// Mid-replacement (rename) or removed: serve what we have.
		return
	}
	if stamp == a.opStamp || stamp == a.opFailed {
		return
	}
	cert, err := loadPair(a.cfg.CertFile, a.cfg.KeyFile)
	if err != nil {
		a.opFailed = stamp
		a.log.Warn("operator server certificate reload failed", "err", err)
		return
	}
	if bytes.Equal(cert.Certificate[0], a.server.Certificate[0]) {
		// Touched, not changed (X509KeyPair made sure the key matches).
		a.opStamp, a.opFailed = stamp, fileStamp{}
		return
	}
	a.server, a.opStamp, a.opFailed = cert, stamp, fileStamp{}
	a.log.Info("operator server certificate loaded", "path", a.cfg.CertFile, "not_after", cert.Leaf.NotAfter, "hosts", cert.Leaf.DNSNames)
}
