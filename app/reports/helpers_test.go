package reports

import (
	"context"
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
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"netmon/app/reports/model"
	"netmon/store"
	"netmon/store/storetest"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time)     { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
func newClock(t time.Time) *clock    { return &clock{t: t} }
func at(s string, loc *time.Location) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		panic(err)
	}
	return t
}

// fakeBuilder builds a small model whose range is the Days whole days
// up to req.Now in UTC; fail makes Build fail.
type fakeBuilder struct {
	calls atomic.Int32
	fail  atomic.Bool
}

func (b *fakeBuilder) Build(_ context.Context, req Request) (*model.Report, error) {
	b.calls.Add(1)
	if b.fail.Load() {
		return nil, errors.New("builder down")
	}
	to := req.Now.UTC().Truncate(24 * time.Hour)
	return &model.Report{Type: req.Type, Title: "Traffic report", Site: req.Site, Days: req.Days,
		From: to.AddDate(0, 0, -req.Days), To: to, GeneratedAt: req.Now, Timezone: "UTC",
		Sections: []model.Section{{ID: "summary", Title: "Summary", Blocks: []model.Block{{Paragraph: "1.2 GB in 7 days"}}}}}, nil
}

// fakeHTML and fakePDF stand for the renderers (a stub on main): they
// write the model's JSON, so the body depends on the data.
func fakeHTML(w io.Writer, r *model.Report) error {
	b, _ := json.Marshal(r)
	_, err := fmt.Fprintf(w, "<!doctype html><pre>%s</pre>", b)
	return err
}

func fakePDF(w io.Writer, r *model.Report) error {
	b, _ := json.Marshal(r)
	_, err := fmt.Fprintf(w, "%%PDF-1.7\n\x00\xff%s", b)
	return err
}

// fakeCompliance records the appended hashes.
type fakeCompliance struct {
	mu   sync.Mutex
	rows [][3]string
}

func (c *fakeCompliance) AppendReport(_ context.Context, sum, data, file string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rows = append(c.rows, [3]string{sum, data, file})
	return nil
}

// newService builds a service on db with the fakes; mod edits deps.
func newService(t *testing.T, db *store.DB, clk *clock, mod func(*Config, *Deps)) (*Service, *fakeBuilder) {
	t.Helper()
	b := &fakeBuilder{}
	cfg := DefaultConfig()
	deps := Deps{DB: db, Builder: b, HTML: fakeHTML, PDF: fakePDF, Now: clk.Now}
	if mod != nil {
		mod(&cfg, &deps)
	}
	return New(storetest.Logger(t), cfg, deps), b
}

// count returns the rows of table (optionally WHERE cond).
func count(t *testing.T, db *store.DB, table, cond string, args ...any) int {
	t.Helper()
	q := "SELECT COUNT(*) FROM " + table
	if cond != "" {
		q += " WHERE " + cond
	}
	var n int
	if err := db.Reader().QueryRowContext(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// auditActions lists the actions of the audit chain in order.
func auditActions(t *testing.T, db *store.DB) []string {
	t.Helper()
	rows, err := db.Reader().QueryContext(t.Context(), `SELECT action FROM audit_events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var a string
		_ = rows.Scan(&a)
		out = append(out, a)
	}
	return out
}

// breakAudit makes every audit append fail, as store's TestAuditFailClosed.
func breakAudit(t *testing.T, db *store.DB) {
	t.Helper()
	qs := []string{`CREATE TRIGGER audit_down BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'audit down'); END`}
	if db.Dialect() == store.Postgres {
		qs = []string{`CREATE FUNCTION audit_down() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit down'; END $$`,
			`CREATE TRIGGER audit_down BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_down()`}
	}
	for _, q := range qs {
		if _, err := db.Writer().ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and
// returns a TLS configuration trusting it (as alerting/notify's tests).
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
	_ = os.WriteFile(certFile, pemBlock("CERTIFICATE", der), 0o600)
	_ = os.WriteFile(keyFile, pemBlock("EC PRIVATE KEY", kder), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// smtpd starts alerting/notify's aiosmtpd peer (STARTTLS required,
// AUTH testuser/testpass) on a free loopback port; it returns the port,
// its mail folder and the trust. Without python3-aiosmtpd it fails: the
// mail is only proven by a real server (make deps installs it).
func smtpd(t *testing.T) (int, string, *tls.Config) {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import aiosmtpd").Run(); err != nil {
		t.Fatal("python3-aiosmtpd is required: install it with make deps (it is in the Makefile's APT_DEPS)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	maildir := filepath.Join(dir, "mail")
	_ = os.Mkdir(maildir, 0o700)
	cert, key, trust := selfSigned(t, dir)
	cmd := exec.Command(py, "../../alerting/notify/testdata/smtpd.py", maildir, cert, key, strconv.Itoa(port), "127.0.0.1")
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
			return port, maildir, trust
		}
		if time.Now().After(deadline) {
			t.Fatalf("smtpd did not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
