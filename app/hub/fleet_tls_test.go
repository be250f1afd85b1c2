package hub

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/config"
)

// tlsHub is a hub with -tls and the CA that signed its certificates.
type tlsHub struct {
	*testHub
	dir    string
	caPool *x509.CertPool
	url    string
}

func startTLSHub(t *testing.T) *tlsHub {
	t.Helper()
	dir := t.TempDir()
	h := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) {
		c.Auth.Password = "admin-password-1"
		c.Fleet.StaticToken = testStaticToken
		c.TLS.Enabled, c.TLS.Dir, c.TLS.Hosts = true, dir, []string{"127.0.0.1"}
	})
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.crt holds no certificate")
	}
	return &tlsHub{testHub: h, dir: dir, caPool: pool, url: fmt.Sprintf("https://127.0.0.1:%d", h.Addr().(*net.TCPAddr).Port)}
}

// post sends a JSON body over TLS with an optional client certificate and
// headers; err is the transport error (a refused handshake).
func (h *tlsHub) post(path string, cert *tls.Certificate, headers map[string]string, body any) (int, string, error) {
	cfg := &tls.Config{RootCAs: h.caPool}
	if cert != nil {
		// Always present the certificate, even when its issuer is not one
		// the hub asks for (Go's client would otherwise send none).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", h.url+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

func newCSR(t *testing.T, cn string) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

func keyPair(t *testing.T, certPEM string, key *ecdsa.PrivateKey) *tls.Certificate {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair([]byte(certPEM), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	return &pair
}

// signWith makes a client certificate for cn signed by the CA in dir (or a
// fresh self-made CA when dir is ""), valid in [from, to].
func signWith(t *testing.T, dir, cn string, from, to time.Time) *tls.Certificate {
	t.Helper()
	var caCert *x509.Certificate
	var caKey any
	if dir == "" {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rogue CA"}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
		caCert, _ = x509.ParseCertificate(der)
		caKey = k
	} else {
		cb, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
		kb, _ := os.ReadFile(filepath.Join(dir, "ca.key"))
		cblk, _ := pem.Decode(cb)
		kblk, _ := pem.Decode(kb)
		var err error
		if caCert, err = x509.ParseCertificate(cblk.Bytes); err != nil {
			t.Fatal(err)
		}
		if caKey, err = x509.ParsePKCS8PrivateKey(kblk.Bytes); err != nil {
			if caKey, err = x509.ParseECPrivateKey(kblk.Bytes); err != nil {
				t.Fatal(err)
			}
		}
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, NotBefore: from, NotAfter: to}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return keyPair(t, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), key)
}

// TestAgentMTLS covers spec 5 item 10 and RELIABILITY case 20: the
// certificate from the hello identifies the agent without a bearer, the CN
// is the hub's whatever the CSR asked, and an expired certificate, one from
// another CA, a CN/token mismatch, a deleted agent's certificate and a
// spoofed client-certificate header are all refused.
func TestAgentMTLS(t *testing.T) {
	h := startTLSHub(t)
	key, csr := newCSR(t, "admin")
	code, body, err := h.post(wire.PathHello, nil, map[string]string{wire.HeaderEnrollToken: testStaticToken},
		wire.Hello{Name: "tls-1", MachineID: "m-tls-1", CSRPEM: csr})
	if err != nil || code != 200 {
		t.Fatalf("hello: %d %s %v", code, body, err)
	}
	var hr wire.HelloResponse
	if err := json.Unmarshal([]byte(body), &hr); err != nil {
		t.Fatal(err)
	}
	if hr.ClientCertPEM == "" || hr.CACertPEM == "" {
		t.Fatalf("hello with a CSR over TLS returned no certificate: %s", body)
	}
	cert := keyPair(t, hr.ClientCertPEM, key)
	leaf, _ := x509.ParseCertificate(cert.Certificate[0])
	if want := fmt.Sprintf("netmon-agent-%d", hr.AgentID); leaf.Subject.CommonName != want {
		t.Errorf("client certificate CN %q, want %q (the CSR asked for admin)", leaf.Subject.CommonName, want)
	}
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life < 89*24*time.Hour || life > 91*24*time.Hour {
		t.Errorf("client certificate life %v, want 90 days", life)
	}
	other := enrolled(t, func() response {
		c, b, err := h.post(wire.PathHello, nil, map[string]string{wire.HeaderEnrollToken: testStaticToken}, wire.Hello{Name: "tls-2", MachineID: "m-tls-2"})
		if err != nil {
			t.Fatal(err)
		}
		return response{code: c, body: b}
	}())

	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	spoofed := map[string]string{"X-Client-Cert": url.QueryEscape(hr.ClientCertPEM), "X-SSL-Client-Cert": url.QueryEscape(hr.ClientCertPEM),
		"X-Forwarded-Client-Cert": "Subject=\"CN=" + leaf.Subject.CommonName + "\"", "Ssl-Client-Subject-Dn": "CN=" + leaf.Subject.CommonName}
	now := time.Now()
	cases := []struct {
		desc      string
		cert      *tls.Certificate
		headers   map[string]string
		want      int  // HTTP status when the handshake succeeds
		handshake bool // false: the TLS handshake itself must fail
	}{
		{"certificate alone", cert, nil, 200, true},
		{"certificate and its own token", cert, bearer(hr.AgentToken), 200, true},
		{"certificate with another agent's token", cert, bearer(other.AgentToken), 401, true},
		{"no certificate, no token", nil, nil, 401, true},
		{"spoofed client-certificate headers", nil, spoofed, 401, true},
		{"token alone over TLS", nil, bearer(hr.AgentToken), 200, true},
		{"certificate from another CA", signWith(t, "", leaf.Subject.CommonName, now.Add(-time.Hour), now.Add(time.Hour)), nil, 0, false},
		{"expired certificate from the hub CA", signWith(t, h.dir, leaf.Subject.CommonName, now.Add(-48*time.Hour), now.Add(-24*time.Hour)), nil, 0, false},
		{"hub CA certificate whose CN is not an agent", signWith(t, h.dir, "admin", now.Add(-time.Hour), now.Add(time.Hour)), nil, 0, false},
	}
	seq := uint64(0)
	for _, c := range cases {
		seq++
		code, body, err := h.post(wire.PathTelemetry, c.cert, c.headers, wire.Telemetry{Seq: seq})
		switch {
		case !c.handshake && err == nil:
			t.Errorf("%s: handshake accepted, status %d %s", c.desc, code, body)
		case c.handshake && err != nil:
			t.Errorf("%s: %v", c.desc, err)
		case c.handshake && code != c.want:
			t.Errorf("%s: status %d, want %d; %s", c.desc, code, c.want, body)
		}
	}

	// Renewal: a new certificate for the same agent, CN forced again.
	key2, csr2 := newCSR(t, "netmon-agent-999999")
	code, body, err = h.post(wire.PathCert, cert, nil, wire.CertRequest{CSRPEM: csr2})
	if err != nil || code != 200 {
		t.Fatalf("renew: %d %s %v", code, body, err)
	}
	var cr wire.CertResponse
	_ = json.Unmarshal([]byte(body), &cr)
	renewed := keyPair(t, cr.ClientCertPEM, key2)
	rleaf, _ := x509.ParseCertificate(renewed.Certificate[0])
	if rleaf.Subject.CommonName != leaf.Subject.CommonName {
		t.Errorf("renewed CN %q, want %q", rleaf.Subject.CommonName, leaf.Subject.CommonName)
	}
	if code, body, _ := h.post(wire.PathCert, nil, nil, wire.CertRequest{CSRPEM: "garbage"}); code != 401 {
		t.Errorf("renewal without identity: %d %s", code, body)
	}

	// A browser connects without a certificate.
	resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: h.caPool}}}).Get(h.url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("browser without certificate: %v %v", resp, err)
	}
	resp.Body.Close()

	// Deleting the agent makes its certificates useless at once.
	req, _ := http.NewRequest("DELETE", fmt.Sprintf("%s/api/v1/agents/%d", h.url, hr.AgentID), nil)
	tok := loginTLS(t, h)
	req.Header.Set("Authorization", "Bearer "+tok)
	dresp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: h.caPool}}}).Do(req)
	if err != nil || dresp.StatusCode != 200 {
		t.Fatalf("delete agent: %v %v", dresp, err)
	}
	dresp.Body.Close()
	for _, c := range []*tls.Certificate{cert, renewed} {
		if code, body, err := h.post(wire.PathTelemetry, c, nil, wire.Telemetry{Seq: 100}); err != nil || code != 401 {
			t.Errorf("deleted agent's certificate: %d %s %v", code, body, err)
		}
	}
}

func loginTLS(t *testing.T, h *tlsHub) string {
	t.Helper()
	code, body, err := h.post("/api/login", nil, nil, map[string]string{"password": "admin-password-1"})
	if err != nil || code != 200 {
		t.Fatalf("login: %d %s %v", code, body, err)
	}
	var out struct {
		Token string `json:"token"`
	}
	_ = json.Unmarshal([]byte(body), &out)
	return out.Token
}
