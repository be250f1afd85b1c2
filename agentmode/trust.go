package agentmode

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"netmon/agentmode/wire"
)

// trustMode is how the hub's server certificate is checked.
type trustMode int

const (
	// modePlain: an http:// hub, no TLS.
	modePlain trustMode = iota
	// modeOperator: -hub-ca. Full verification: chain to that CA and the
	// host name of hub.url, because an operator's CA may be a corporate
	// or public one that signs many hosts.
	modeOperator
	// modePinned: the hub's own CA, pinned at first use. The chain must
	// lead to it; the host name is not checked, since that CA signs only
	// the hub's server certificate (ServerAuth, checked) and agent client
	// certificates, and agents often reach the hub by an address its
	// certificate does not list (NAT, a bare IP).
	modePinned
	// modeTOFU: nothing pinned yet. The first server certificate is
	// accepted for the hello; the CA the hub returns is then pinned if
	// that certificate chains to it.
	modeTOFU
)

func (m trustMode) String() string {
	return [...]string{"plain", "hub-ca", "pinned", "trust-on-first-use"}[m]
}

// TrustError is a hub certificate that does not chain to the trusted CA:
// a different hub, a re-created hub CA, or someone in the middle. Nothing
// is sent over such a connection.
type TrustError struct {
	// Anchor says where the trusted CA came from.
	Anchor string
	// TrustedCA and PresentedCA are SHA-256 fingerprints (hex).
	TrustedCA   string
	PresentedCA string
	Err         error
}

func (e *TrustError) Error() string {
	return fmt.Sprintf("hub certificate does not chain to the %s CA (trusted sha256 %s, presented %s): %v", e.Anchor, e.TrustedCA, e.PresentedCA, e.Err)
}

func (e *TrustError) Unwrap() error { return e.Err }

// trust builds the HTTP client that talks to the hub and holds what it
// trusts: the pinned or operator CA and the agent's client certificate.
type trust struct {
	host string // hub.url's host, for name checks with -hub-ca
	// now is the agent's clock, for the client certificate's validity.
	now func() time.Time

	mu     sync.Mutex
	mode   trustMode
	anchor string // where the CA came from, for error messages
	roots  *x509.CertPool
	caFP   string
	cert   *tls.Certificate
	client *http.Client
}

func newTrust(https bool, host string, now func() time.Time) *trust {
	t := &trust{host: host, now: now, mode: modePlain}
	if https {
		t.mode = modeTOFU
	}
	return t
}

// useCA makes pemCA the only trusted root (mode modeOperator or
// modePinned).
func (t *trust) useCA(mode trustMode, anchor string, pemCA []byte) error {
	certs, err := parseCerts(pemCA)
	if err != nil {
		return fmt.Errorf("%s: %w", anchor, err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.mode, t.anchor, t.roots, t.caFP = mode, anchor, pool, fingerprint(certs[0])
	t.resetClientLocked()
	return nil
}

func (t *trust) current() trustMode {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mode
}

// setCert installs the client certificate presented from now on.
func (t *trust) setCert(c *tls.Certificate) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cert = c
	// Open connections keep the old certificate; new ones get this one.
	if t.client != nil {
		t.client.CloseIdleConnections()
	}
}

// leaf returns the client certificate, or nil.
func (t *trust) leaf() *x509.Certificate {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cert == nil {
		return nil
	}
	return t.cert.Leaf
}

// httpClient returns the client for the current trust; it is rebuilt when
// the trust changes.
func (t *trust) httpClient() *http.Client {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.client != nil {
		return t.client
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2, 2
	if t.mode != modePlain {
		tr.TLSClientConfig = &tls.Config{
			MinVersion: tls.VersionTLS12,
			// The standard check is replaced by verifyConnection, which
			// trusts only the pinned or -hub-ca CA (never the system
			// roots) and can name both fingerprints when they differ.
			InsecureSkipVerify:   true, //nolint:gosec // verified in VerifyConnection
			VerifyConnection:     t.verifyConnection,
			GetClientCertificate: t.clientCertificate,
		}
	}
	t.client = &http.Client{Transport: tr}
	return t.client
}

// close drops idle connections.
func (t *trust) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.resetClientLocked()
}

func (t *trust) resetClientLocked() {
	if t.client != nil {
		t.client.CloseIdleConnections()
		t.client = nil
	}
}

func (t *trust) verifyConnection(cs tls.ConnectionState) error {
	t.mu.Lock()
	mode, roots, anchor, caFP, host := t.mode, t.roots, t.anchor, t.caFP, t.host
	t.mu.Unlock()
	if len(cs.PeerCertificates) == 0 {
		return errors.New("hub sent no certificate")
	}
	if mode == modeTOFU {
		return nil // checked against the returned CA after the hello
	}
	if err := verifyChain(cs.PeerCertificates, x509.VerifyOptions{Roots: roots}); err != nil {
		return &TrustError{Anchor: anchor, TrustedCA: caFP, PresentedCA: presentedCA(cs.PeerCertificates), Err: err}
	}
	if mode == modeOperator {
		// Checked apart from the chain so the log says which one failed.
		if err := cs.PeerCertificates[0].VerifyHostname(host); err != nil {
			return fmt.Errorf("hub certificate does not name %s (add it to the hub's -tls-hosts, or use a host name the certificate lists in hub.url): %w", host, err)
		}
	}
	return nil
}

// verifyChain checks a server chain: ServerAuth usage, chaining to
// opts.Roots through the intermediates sent, and not an agent's client
// certificate posing as the hub.
func verifyChain(chain []*x509.Certificate, opts x509.VerifyOptions) error {
	leaf := chain[0]
	if strings.HasPrefix(leaf.Subject.CommonName, wire.CertCNPrefix) {
		return fmt.Errorf("server certificate %q is an agent certificate", leaf.Subject.CommonName)
	}
	opts.Intermediates = x509.NewCertPool()
	for _, c := range chain[1:] {
		opts.Intermediates.AddCert(c)
	}
	opts.KeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	_, err := leaf.Verify(opts)
	return err
}

// clientCertificate presents the agent's certificate when it has a valid
// one. An expired certificate is not presented (the hub would refuse the
// handshake): the bearer token still identifies the agent, and renewal
// fetches a new certificate.
func (t *trust) clientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.cert == nil || t.cert.Leaf == nil || now.After(t.cert.Leaf.NotAfter) || now.Before(t.cert.Leaf.NotBefore) {
		return &tls.Certificate{}, nil
	}
	return t.cert, nil
}

// presentedCA names what the server chained to: the fingerprint of the
// last certificate it sent when that is a CA, else the leaf's issuer.
func presentedCA(chain []*x509.Certificate) string {
	last := chain[len(chain)-1]
	if last.IsCA {
		return fingerprint(last)
	}
	// The hub sent only its own certificate: name the CA as well as the
	// certificate allows.
	return fmt.Sprintf("unknown: CA %q (authority key id %x) not sent by the hub; its certificate sha256 %s", last.Issuer.String(), last.AuthorityKeyId, fingerprint(last))
}

func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return hex.EncodeToString(sum[:])
}

// parseCerts reads every certificate of a PEM bundle.
func parseCerts(pemData []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for rest := pemData; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("parse certificate: %w", err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return out, nil
}
