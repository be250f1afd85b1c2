package pki

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"netmon/agentmode/wire"
)

// ErrInvalidCSR is wrapped by SignClient for a request the agent got
// wrong (a 400 for the API), as opposed to a failure of the hub.
var ErrInvalidCSR = errors.New("invalid certificate request")

const (
	// maxCSRBytes bounds the input before any parsing; the API already
	// limits bodies to wire.MaxCertBytes, this protects other callers.
	maxCSRBytes = 64 << 10
	// minRSABits and maxRSABits bound RSA keys: below 2048 is weak, above
	// 8192 only makes signature checks expensive.
	minRSABits = 2048
	maxRSABits = 8192
)

// SignClient issues an agent's client certificate from a PEM certificate
// request. Only the request's public key is used: it must be ECDSA P-256
// or P-384, RSA of 2048 bits or more, or Ed25519, and the request must be
// signed by its key (proof of possession). Its subject and extensions are
// ignored: the certificate names CN netmon-agent-<agentID>, allows client
// authentication only and lasts Config.ClientLife, never beyond the CA.
func (a *Authority) SignClient(csrPEM string, agentID int64) (certPEM string, notAfter time.Time, err error) {
	if agentID <= 0 {
		return "", time.Time{}, fmt.Errorf("sign client certificate: agent id %d is not positive", agentID)
	}
	csr, err := parseCSR(csrPEM)
	if err != nil {
		return "", time.Time{}, err
	}
	// Whole seconds in UTC, as the certificate stores them, so the
	// returned notAfter is exactly the certificate's.
	now := a.now().UTC().Truncate(time.Second)
	if !now.Before(a.ca.NotAfter) {
		return "", time.Time{}, fmt.Errorf("sign client certificate: the hub CA expired on %s", a.ca.NotAfter.UTC().Format("2006-01-02"))
	}
	serial, err := randomSerial()
	if err != nil {
		return "", time.Time{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: AgentCN(agentID)},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              minTime(now.Add(a.cfg.ClientLife), a.ca.NotAfter),
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.ca, csr.PublicKey, a.caKey)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign client certificate: %w", err)
	}
	a.log.Info("client certificate issued", "agent_id", agentID, "not_after", tmpl.NotAfter, "serial", serial.Text(16))
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), tmpl.NotAfter, nil
}

// parseCSR decodes, checks the key of and verifies a PEM request.
func parseCSR(csrPEM string) (*x509.CertificateRequest, error) {
	if len(csrPEM) > maxCSRBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidCSR, len(csrPEM), maxCSRBytes)
	}
	b, ok := pemBlock([]byte(csrPEM), "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST")
	if !ok {
		return nil, fmt.Errorf("%w: no PEM CERTIFICATE REQUEST block", ErrInvalidCSR)
	}
	csr, err := x509.ParseCertificateRequest(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidCSR, err)
	}
	// The key is checked before the signature so an oversized RSA key is
	// refused before it costs a verification.
	if err := checkKey(csr.PublicKey); err != nil {
		return nil, err
	}
	switch csr.SignatureAlgorithm {
	case x509.SHA1WithRSA, x509.ECDSAWithSHA1, x509.DSAWithSHA1, x509.MD5WithRSA, x509.MD2WithRSA:
		return nil, fmt.Errorf("%w: weak signature algorithm %s", ErrInvalidCSR, csr.SignatureAlgorithm)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("%w: signature: %w", ErrInvalidCSR, err)
	}
	return csr, nil
}

// checkKey accepts the key types of the spec's agents.
func checkKey(pub any) error {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() {
			return fmt.Errorf("%w: ECDSA curve %s not accepted (P-256 or P-384)", ErrInvalidCSR, k.Curve.Params().Name)
		}
	case *rsa.PublicKey:
		if n := k.N.BitLen(); n < minRSABits || n > maxRSABits {
			return fmt.Errorf("%w: RSA key of %d bits not accepted (%d to %d)", ErrInvalidCSR, n, minRSABits, maxRSABits)
		}
	case ed25519.PublicKey:
	default:
		return fmt.Errorf("%w: key type %T not accepted", ErrInvalidCSR, pub)
	}
	return nil
}

// AgentCN returns the client-certificate common name of agent id.
func AgentCN(id int64) string {
	return wire.CertCNPrefix + strconv.FormatInt(id, 10)
}

// ParseAgentCN returns the agent id of a common name of the exact form
// netmon-agent-<id>: decimal digits only, no sign, no leading zero, id > 0,
// so each id has exactly one name and "netmon-agent-+7" or "-007" cannot
// alias agent 7.
func ParseAgentCN(cn string) (int64, bool) {
	digits, ok := strings.CutPrefix(cn, wire.CertCNPrefix)
	if !ok || digits == "" || digits[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// AgentID returns the agent a connection authenticated as by client
// certificate. It reads only the verified chain (never PeerCertificates,
// never a header) and needs a leaf with the client-auth usage and a CN
// netmon-agent-<id>. It is meaningful for connections served with
// ServerTLSConfig, whose only client CA is the hub's; the caller must
// still check that the agent exists (a deleted agent's certificate stays
// valid until it expires, and there is no revocation list).
func AgentID(cs *tls.ConnectionState) (int64, bool) {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return 0, false
	}
	leaf := cs.VerifiedChains[0][0]
	if leaf == nil || !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) {
		return 0, false
	}
	return ParseAgentCN(leaf.Subject.CommonName)
}
