package notify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/mail"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"netmon/app/netguard"
	"netmon/store/record"
	"netmon/store/storetest"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and
// returns a TLS configuration trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, trust *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// smtpd starts the aiosmtpd peer; it returns its port and mail folder.
func smtpd(t *testing.T) (int, string, *tls.Config) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	maildir, trust := smtpdAt(t, "127.0.0.1", port)
	return port, maildir, trust
}

// smtpdAt starts the aiosmtpd peer on host:port, prefixed by wrap (for
// example ip netns exec NS); it returns its mail folder and the trust.
func smtpdAt(t *testing.T, host string, port int, wrap ...string) (string, *tls.Config) {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import aiosmtpd").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3-aiosmtpd is required in CI (make deps)")
		}
		t.Skip("python3-aiosmtpd not installed (make deps)")
	}
	dir := t.TempDir()
	maildir := filepath.Join(dir, "mail")
	_ = os.Mkdir(maildir, 0o700)
	cert, key, trust := selfSigned(t, dir)
	args := append(wrap, py, "testdata/smtpd.py", maildir, cert, key, strconv.Itoa(port), host)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			c.Close()
			return maildir, trust
		}
		if time.Now().After(deadline) {
			t.Fatalf("smtpd did not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestEmail sends through a real SMTP server with STARTTLS and AUTH:
// the message arrives with its headers and body; then a wrong password
// is a failed delivery whose log says "authentication failed".
func TestEmail(t *testing.T) {
	port, maildir, trust := smtpd(t)
	db := storetest.OpenSQLite(t)
	s := Settings{EmailHost: "127.0.0.1", EmailPort: port, EmailFrom: "netmon@example.test",
		EmailTo: []string{"noc@example.test", "oncall@example.test"}, EmailUser: "testuser", EmailPass: "testpass"}
	box := newBox(s)
	n, _ := startNotifier(t, db, testConfig(), box, Deps{EmailTLS: trust})
	n.Offer(portEvent)
	waitDeliveries(t, db, record.DeliveryDelivered, 1, 15*time.Second)

	emls, _ := filepath.Glob(filepath.Join(maildir, "*.eml"))
	if len(emls) != 1 {
		t.Fatalf("%d messages received, want 1", len(emls))
	}
	raw, _ := os.ReadFile(emls[0])
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	for h, want := range map[string]string{
		"From":           "<netmon@example.test>",
		"To":             "<noc@example.test>, <oncall@example.test>",
		"Subject":        "[netmon] CRIT Suspicious remote port: connection to 203.0.113.9:4444",
		"X-Netmon-Kind":  "port",
		"X-Netmon-Event": "42",
	} {
		if got := msg.Header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	body := make([]byte, 4096)
	nb, _ := msg.Body.Read(body)
	wantBody := "connection to 203.0.113.9:4444\r\n\r\nKind:     port (Suspicious remote port)\r\nSeverity: 9\r\nKey:      agent1|203.0.113.9:4444\r\nSite:     paris\r\nFired:    2025-11-24T16:00:00Z\r\nEvent:    42\r\n"
	if got := string(body[:nb]); got != wantBody && got != strings.ReplaceAll(wantBody, "\r\n", "\n") {
		t.Errorf("body:\n got %q\nwant %q", got, wantBody)
	}
	jb, _ := os.ReadFile(strings.TrimSuffix(emls[0], ".eml") + ".json")
	var env struct {
		From string   `json:"from"`
		To   []string `json:"to"`
	}
	_ = json.Unmarshal(jb, &env)
	if env.From != "netmon@example.test" || strings.Join(env.To, ",") != "noc@example.test,oncall@example.test" {
		t.Errorf("envelope %+v", env)
	}

	s.EmailPass = "wrong"
	box.set(s)
	ev := portEvent
	ev.ID = 43
	n.Offer(ev)
	ds := waitDeliveries(t, db, record.DeliveryFailed, 1, 15*time.Second)
	if d := ds[0]; d.EventID != 43 || d.Attempts != 1 || d.Error != "authentication failed" {
		t.Errorf("failed delivery %+v, want event 43 failed at once: authentication failed (never the server's reply)", d)
	}
}

// TestEmailDefaultPort: email_port 0 means 587. A real aiosmtpd listens
// on 587 inside a network namespace the test makes (so no other test's
// port 587 is in the way), reached over a veth pair; the guard allows
// that /30 only. The message arriving proves the port the client dialled.
func TestEmailDefaultPort(t *testing.T) {
	need := func(err error, what string) {
		if err == nil {
			return
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %v (CI runs as root with iproute2)", what, err)
		}
		t.Skipf("%s: %v", what, err)
	}
	if os.Geteuid() != 0 {
		need(errors.New("not root"), "network namespace")
	}
	_, err := exec.LookPath("ip")
	need(err, "iproute2")
	pid := os.Getpid()
	ns, host, peer := fmt.Sprintf("nm-smtp-%d", pid), fmt.Sprintf("vh%d", pid), fmt.Sprintf("vn%d", pid)
	// A /30 of 10.251.0.0/16 chosen by the pid, so parallel runs differ.
	base := netip.AddrFrom4([4]byte{10, 251, byte(pid >> 6), byte(pid<<2) & 0xfc})
	hubAddr, smtpAddr := base.Next(), base.Next().Next()
	ipcmd := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ipcmd("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() }) // takes the veth pair with it
	ipcmd("link", "add", host, "type", "veth", "peer", "name", peer)
	ipcmd("link", "set", peer, "netns", ns)
	ipcmd("addr", "add", hubAddr.String()+"/30", "dev", host)
	ipcmd("link", "set", host, "up")
	ipcmd("-n", ns, "addr", "add", smtpAddr.String()+"/30", "dev", peer)
	ipcmd("-n", ns, "link", "set", peer, "up")
	ipcmd("-n", ns, "link", "set", "lo", "up")

	maildir, trust := smtpdAt(t, smtpAddr.String(), 587, "ip", "netns", "exec", ns)
	db := storetest.OpenSQLite(t)
	box := newBox(Settings{EmailHost: smtpAddr.String(), EmailPort: 0, EmailFrom: "netmon@example.test",
		EmailTo: []string{"noc@example.test"}, EmailUser: "testuser", EmailPass: "testpass"})
	guard := netguard.New(netguard.Config{Allow: []netip.Prefix{netip.PrefixFrom(base, 30)}})
	n, _ := startNotifier(t, db, testConfig(), box, Deps{EmailTLS: trust, Guard: guard})
	n.Offer(portEvent)
	waitDeliveries(t, db, record.DeliveryDelivered, 1, 15*time.Second)
	emls, _ := filepath.Glob(filepath.Join(maildir, "*.eml"))
	if len(emls) != 1 {
		t.Fatalf("%d messages received on %s:587, want 1", len(emls), smtpAddr)
	}
	jb, _ := os.ReadFile(strings.TrimSuffix(emls[0], ".eml") + ".json")
	var env struct {
		Peer string `json:"peer"`
	}
	_ = json.Unmarshal(jb, &env)
	if env.Peer != hubAddr.String() {
		t.Errorf("peer %q, want %s (over the veth pair)", env.Peer, hubAddr)
	}
}
