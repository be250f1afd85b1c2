package hub

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"netmon/app/config"
)

// startSMTPPeer runs the aiosmtpd peer of alerting/notify (STARTTLS,
// AUTH testuser/testpass; its greeting and refusals carry
// PEER-TEXT-MARKER) on a free loopback port; it returns the port and a
// TLS configuration trusting its certificate.
func startSMTPPeer(t *testing.T) (int, *tls.Config) {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import aiosmtpd").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3-aiosmtpd is required in CI (make deps)")
		}
		t.Skip("python3-aiosmtpd not installed (make deps)")
	}
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	maildir := filepath.Join(dir, "mail")
	_ = os.Mkdir(maildir, 0o700)
	cmd := exec.Command(py, "../../alerting/notify/testdata/smtpd.py", maildir, certFile, keyFile, strconv.Itoa(port), "127.0.0.1")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			c.Close()
			return port, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
		}
		if time.Now().After(deadline) {
			t.Fatalf("smtpd did not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAlertEmailTestNoServerText (issue 28 item 9): the e-mail channel's
// "send test" against a real SMTP server answers a classified result —
// ok, authentication failed, recipient refused, TLS failed, connection
// refused — never the server's reply line, and its audit record says the
// same.
func TestAlertEmailTestNoServerText(t *testing.T) {
	port, trust := startSMTPPeer(t)
	closed := closedAddr(t)
	_, closedPort, _ := net.SplitHostPort(closed)
	dsn := storetestSQLite(t)
	h := startTestHubWith(t, dsn, func(c *config.HubConfig) {
		c.Auth.Password = "bootstrap-secret-1"
		loopbackNotify(c)
	}, func(h *Hub) { h.emailTLS = trust })
	boot := h.client(t)
	boot.login("", h.cfg.Auth.Password)
	boot.call("PUT", "/api/alerts", map[string]any{"notifiers": map[string]any{"email_host": "127.0.0.1", "email_port": port,
		"email_from": "netmon@example.test", "email_to": []string{"noc@example.test"}, "email_user": "testuser", "email_pass": "testpass"}}).must(t, 200)
	for _, tt := range []struct {
		desc, put, want string
	}{
		{"accepted", "", `{"channel":"email","ok":true,"error":""}`},
		{"wrong password (535)", `{"notifiers":{"email_pass":"wrong"}}`, `{"channel":"email","ok":false,"error":"authentication failed"}`},
		{"recipient refused (550)", `{"notifiers":{"email_pass":"testpass","email_to":["refused@example.test"]}}`, `{"channel":"email","ok":false,"error":"recipient refused"}`},
		{"nothing listening", `{"notifiers":{"email_port":` + closedPort + `,"email_pass":"testpass","email_to":["noc@example.test"]}}`, `{"channel":"email","ok":false,"error":"connection refused"}`},
	} {
		if tt.put != "" {
			boot.call("PUT", "/api/alerts", tt.put).must(t, 200)
		}
		if r := boot.call("POST", "/api/v1/alerts/channels/email/test", nil).must(t, 200); r.body != tt.want {
			t.Errorf("%s: %s, want %s", tt.desc, r.body, tt.want)
		}
	}
	r := boot.call("GET", "/api/v1/audit?limit=100", nil).must(t, 200)
	if strings.Contains(r.body, "PEER-TEXT-MARKER") || strings.Contains(r.body, "5.7.8") || !strings.Contains(r.body, `"detail":"recipient refused"`) {
		t.Errorf("audit of the channel tests: %s", r.body)
	}

	// The same server, its certificate not trusted by a hub of its own.
	h2 := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) {
		c.Auth.Password = "bootstrap-secret-1"
		loopbackNotify(c)
	})
	c2 := h2.client(t)
	c2.login("", h2.cfg.Auth.Password)
	c2.call("PUT", "/api/alerts", map[string]any{"notifiers": map[string]any{"email_host": "127.0.0.1", "email_port": port,
		"email_from": "netmon@example.test", "email_to": []string{"noc@example.test"}, "email_user": "testuser", "email_pass": "testpass"}}).must(t, 200)
	if r := c2.call("POST", "/api/v1/alerts/channels/email/test", nil).must(t, 200); r.body != `{"channel":"email","ok":false,"error":"TLS failed"}` {
		t.Errorf("untrusted certificate: %s", r.body)
	}
}
