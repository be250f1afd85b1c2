package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testClock is a settable Config.Now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *testClock { return &testClock{t: time.Now()} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// syncBuffer collects log output written from handshake goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testConfig is a config on a fresh dir.
func testConfig(t *testing.T) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Dir = filepath.Join(t.TempDir(), "tls")
	cfg.Hosts = []string{"localhost", "127.0.0.1", "::1"}
	return cfg
}

// newAuthority calls New and fails the test on error; the log goes to
// the returned buffer.
func newAuthority(t *testing.T, cfg Config, clock *testClock) (*Authority, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	a, err := New(slog.New(slog.NewTextHandler(io.MultiWriter(logs, t.Output()), nil)), cfg, Deps{Now: clock.Now})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a, logs
}

// newKey generates a key of kind: p256, p384, p521, rsa1024, rsa2048, ed25519.
func newKey(t testing.TB, kind string) crypto.Signer {
	t.Helper()
	var (
		k   crypto.Signer
		err error
	)
	switch kind {
	case "p256":
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "p384":
		k, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "p521":
		k, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "rsa1024":
		k, err = rsa.GenerateKey(rand.Reader, 1024)
	case "rsa2048":
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ed25519":
		_, k, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("unknown key kind %q", kind)
	}
	if err != nil {
		t.Fatalf("generate %s key: %v", kind, err)
	}
	return k
}

// newCSR returns a PEM request for key; it also asks for a DNS SAN, which
// SignClient must drop.
func newCSR(t testing.TB, key crypto.Signer, cn string) string {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:  pkix.Name{CommonName: cn, Organization: []string{"evil"}},
		DNSNames: []string{"hub.example.com"},
	}, key)
	if err != nil {
		t.Fatalf("create CSR: %v", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// parseCertPEM parses a single PEM certificate.
func parseCertPEM(t testing.TB, s string) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		t.Fatalf("no PEM in %q", s)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatalf("parse certificate: %v", err)
	}
	return c
}

// agentCert signs a fresh P-256 key for agent id through SignClient.
func agentCert(t *testing.T, a *Authority, id int64) tls.Certificate {
	t.Helper()
	key := newKey(t, "p256")
	certPEM, _, err := a.SignClient(newCSR(t, key, "anything"), id)
	if err != nil {
		t.Fatalf("SignClient: %v", err)
	}
	leaf := parseCertPEM(t, certPEM)
	return tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
}

// testCA is a CA made outside the package: another organisation's CA,
// or (with the hub's cert and key) an issuer bypassing SignClient.
type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func newTestCA(t *testing.T, cn string) testCA {
	t.Helper()
	key := newKey(t, "p256")
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatalf("create test CA: %v", err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCA{cert, key}
}

func (c testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.cert)
	return p
}

var handSerial atomic.Int64

// issue signs tmpl (serial and dates filled when zero) for a new P-256
// key and returns the pair.
func (c testCA) issue(t *testing.T, tmpl *x509.Certificate) tls.Certificate {
	t.Helper()
	key := newKey(t, "p256")
	if tmpl.SerialNumber == nil {
		tmpl.SerialNumber = big.NewInt(1000 + handSerial.Add(1))
	}
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, key.Public(), c.key)
	if err != nil {
		t.Fatalf("issue test certificate: %v", err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// writePair writes a pair as PEM files.
func writePair(t *testing.T, cert tls.Certificate, certPath, keyPath string) {
	t.Helper()
	keyPEM, err := marshalKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
}

// startServer serves HTTPS with a.ServerTLSConfig() on loopback. The
// handler answers "<id> <ok>" from AgentID(r.TLS); hits counts requests
// that reached it.
func startServer(t *testing.T, a *Authority) (addr string, hits *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hits = &atomic.Int64{}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			id, ok := AgentID(r.TLS)
			fmt.Fprintf(w, "%d %v", id, ok)
		}),
		// Refused handshakes are the point of several tests.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go srv.Serve(tls.NewListener(ln, a.ServerTLSConfig()))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), hits
}

// clientConfig trusts roots and, when cert is not nil, presents it
// whatever CAs the server asks for (as an attacker would).
func clientConfig(roots *x509.CertPool, cert *tls.Certificate, now func() time.Time) *tls.Config {
	cfg := &tls.Config{RootCAs: roots, Time: now}
	if cert != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return cfg
}

// get makes one request on a fresh connection and returns the body.
func get(addr string, cfg *tls.Config, header http.Header) (string, error) {
	c := &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true},
	}
	req, err := http.NewRequest("GET", "https://"+addr+"/", nil)
	if err != nil {
		return "", err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// serverLeaf handshakes and returns the certificate the server presented
// (verified against cfg.RootCAs).
func serverLeaf(t *testing.T, addr string, cfg *tls.Config) *x509.Certificate {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0]
}

// snapshot returns the contents of every file in dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(data)
	}
	return m
}
