package agentmode

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"time"

	"netmon/agentmode/state"
	"netmon/agentmode/wire"
)

// newKeyAndCSR makes a fresh ECDSA P-256 key and a certificate request for
// it. The hub ignores the subject and sets CN netmon-agent-<id> itself.
func newKeyAndCSR() (*ecdsa.PrivateKey, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("generate client key: %w", err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "netmon-agent"},
	}, key)
	if err != nil {
		return nil, "", fmt.Errorf("create certificate request: %w", err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})), nil
}

// saveClientCert checks that certPEM belongs to key, writes <state>.crt
// and <state>.key (0600, atomically) and starts presenting it.
func (a *Agent) saveClientCert(certPEM string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode client key: %w", err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	pair, err := tls.X509KeyPair([]byte(certPEM), keyPEM)
	if err != nil {
		return fmt.Errorf("client certificate from the hub: %w", err)
	}
	// The key goes first: a certificate on disk without its key would be
	// useless, a key without its certificate is merely renewed.
	if err := state.WriteFile(a.files.Key, keyPEM); err != nil {
		return err
	}
	if err := state.WriteFile(a.files.Cert, []byte(certPEM)); err != nil {
		return err
	}
	a.hub.trust.setCert(&pair)
	a.log.Info("client certificate saved", "file", a.files.Cert, "not_after", pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	return nil
}

// loadClientCert reads the certificate files left by an earlier run. A
// missing or broken pair is logged and renewal fetches a new one.
func (a *Agent) loadClientCert() {
	certPEM, err1 := state.ReadOptional(a.files.Cert)
	keyPEM, err2 := state.ReadOptional(a.files.Key)
	if err := errors.Join(err1, err2); err != nil {
		a.log.Warn("client certificate unreadable", "err", err)
		return
	}
	if certPEM == nil || keyPEM == nil {
		return
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		a.log.Warn("client certificate files do not match, a new one will be requested", "file", a.files.Cert, "err", err)
		return
	}
	a.hub.trust.setCert(&pair)
}

// renewalDue reports whether the client certificate is at or past half
// its life (spec 8), or missing while the hub may issue one.
func renewalDue(leaf *x509.Certificate, now time.Time) bool {
	if leaf == nil {
		return true
	}
	half := leaf.NotBefore.Add(leaf.NotAfter.Sub(leaf.NotBefore) / 2)
	return !now.Before(half)
}

// maybeRenew renews the client certificate when it is due. Failures are
// logged and retried one interval later; a hub without TLS (404) is not
// asked again during this run.
func (a *Agent) maybeRenew(ctx context.Context) {
	if a.hub.trust.current() == modePlain || a.certUnsupported {
		return
	}
	now := a.clock.Now()
	if now.Before(a.renewRetryAt) || !renewalDue(a.hub.trust.leaf(), now) {
		return
	}
	err := a.renew(ctx)
	var se *StatusError
	switch {
	case err == nil:
	case errors.As(err, &se) && se.Code == http.StatusNotFound:
		a.certUnsupported = true
		a.log.Info("hub issues no client certificates (hub TLS is off); using the bearer token only")
	default:
		a.renewRetryAt = now.Add(a.intervalDuration())
		a.log.Warn("client certificate renewal failed", "err", err, "retry_in", a.intervalDuration().String())
	}
}

func (a *Agent) renew(ctx context.Context) error {
	key, csr, err := newKeyAndCSR()
	if err != nil {
		return err
	}
	var resp wire.CertResponse
	if _, err := a.hub.post(ctx, wire.PathCert, bearer(a.store.Get().AgentToken), wire.CertRequest{CSRPEM: csr}, &resp); err != nil {
		return fmt.Errorf("renew client certificate: %w", err)
	}
	if err := a.saveClientCert(resp.ClientCertPEM, key); err != nil {
		return err
	}
	a.noteHubCA(resp.CACertPEM)
	return nil
}

// noteHubCA keeps <state>.ca current with the CA that signs the client
// certificate. It never changes what the server is verified against: a
// pinned CA stays pinned whatever the hub says afterwards.
func (a *Agent) noteHubCA(caPEM string) {
	if caPEM == "" {
		return
	}
	pinned := a.store.Get().CAPEM
	if a.hub.trust.current() == modePinned && pinned != "" && pinned != caPEM {
		a.log.Warn("hub returned a CA that differs from the pinned one; keeping the pinned CA", "file", a.files.CA)
		return
	}
	if old, _ := state.ReadOptional(a.files.CA); string(old) == caPEM {
		return
	}
	if err := state.WriteFile(a.files.CA, []byte(caPEM)); err != nil {
		a.log.Warn("cannot write the hub CA file", "err", err)
	}
}
