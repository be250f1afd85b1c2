package compliance

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"netmon/store/storetest"
)

// testTSA is a real RFC 3161 authority: `openssl ts -reply` behind an
// HTTP handler, with its own test CA (PEERS-2.md section 5).
type testTSA struct {
	dir string
	srv *httptest.Server
	mu  sync.Mutex // the serial file is not locked by openssl
	// down makes the handler answer 503; replay makes it answer the
	// previous reply again (whose nonce is another request's).
	down, replay atomic.Bool
	last         []byte
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func newTestTSA(t *testing.T, cn string) *testTSA {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("openssl is required (APT_DEPS)")
		}
		t.Skip("openssl not installed")
	}
	d := t.TempDir()
	p := func(n string) string { return filepath.Join(d, n) }
	run(t, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", p("ca.key"), "-out", p("ca.pem"), "-days", "30",
		"-subj", "/CN="+cn+" Root CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
	run(t, "openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", p("tsa.key"), "-out", p("tsa.csr"), "-subj", "/CN="+cn)
	if err := os.WriteFile(p("tsa.ext"), []byte("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,nonRepudiation\nextendedKeyUsage=critical,timeStamping\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "openssl", "x509", "-req", "-in", p("tsa.csr"), "-CA", p("ca.pem"), "-CAkey", p("ca.key"), "-CAcreateserial", "-days", "30",
		"-sha256", "-extfile", p("tsa.ext"), "-out", p("tsa.pem"))
	cnf := fmt.Sprintf(`[ tsa ]
default_tsa = tsa_config1
[ tsa_config1 ]
dir = %s
serial = $dir/tsaserial
crypto_device = builtin
signer_cert = $dir/tsa.pem
certs = $dir/ca.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
clock_precision_digits = 0
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`, d)
	if err := os.WriteFile(p("tsa.cnf"), []byte(cnf), 0o644); err != nil {
		t.Fatal(err)
	}
	a := &testTSA{dir: d}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Content-Type") != "application/timestamp-query" {
			http.Error(w, "need application/timestamp-query", http.StatusUnsupportedMediaType)
			return
		}
		q, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.replay.Load() && a.last != nil {
			w.Header().Set("Content-Type", "application/timestamp-reply")
			w.Write(a.last)
			return
		}
		tmp, _ := os.MkdirTemp(d, "q")
		defer os.RemoveAll(tmp)
		_ = os.WriteFile(filepath.Join(tmp, "q.tsq"), q, 0o644)
		out, err := exec.Command("openssl", "ts", "-reply", "-config", p("tsa.cnf"), "-queryfile", filepath.Join(tmp, "q.tsq"), "-out", filepath.Join(tmp, "r.tsr")).CombinedOutput()
		if err != nil {
			http.Error(w, string(out), http.StatusBadRequest)
			return
		}
		a.last, _ = os.ReadFile(filepath.Join(tmp, "r.tsr"))
		w.Header().Set("Content-Type", "application/timestamp-reply")
		w.Write(a.last)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *testTSA) roots(t *testing.T) *x509.CertPool {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(a.dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return pool
}

func TestStampOpenSSL(t *testing.T) {
	a := newTestTSA(t, "Test TSA")
	b := newTestTSA(t, "Other TSA")
	imprint := sha256.Sum256([]byte("seal body"))
	tok, err := Stamp(t.Context(), http.DefaultClient, a.srv.URL, imprint[:])
	if err != nil {
		t.Fatalf("stamp: %v", err)
	}
	if err := CheckStamp(tok, imprint[:], nil, a.roots(t)); err != nil {
		t.Fatalf("check: %v", err)
	}
	// The same token through OpenSSL's own verifier.
	tsr := filepath.Join(t.TempDir(), "r.tsr")
	_ = os.WriteFile(tsr, tok, 0o644)
	out, err := exec.Command("openssl", "ts", "-verify", "-digest", hex.EncodeToString(imprint[:]), "-in", tsr,
		"-CAfile", filepath.Join(a.dir, "ca.pem"), "-untrusted", filepath.Join(a.dir, "tsa.pem")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Verification: OK") {
		t.Fatalf("openssl ts -verify: %v\n%s", err, out)
	}

	// Case 16.
	other := sha256.Sum256([]byte("another body"))
	if err := CheckStamp(tok, other[:], nil, a.roots(t)); err == nil || !strings.Contains(err.Error(), "imprint differs") {
		t.Errorf("wrong imprint: %v", err)
	}
	a.replay.Store(true)
	if _, err := Stamp(t.Context(), http.DefaultClient, a.srv.URL, imprint[:]); err == nil || !strings.Contains(err.Error(), "nonce differs") {
		t.Errorf("replayed reply (wrong nonce): %v", err)
	}
	a.replay.Store(false)
	tokB, err := Stamp(t.Context(), http.DefaultClient, b.srv.URL, imprint[:])
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckStamp(tokB, imprint[:], nil, a.roots(t)); err == nil || !strings.Contains(err.Error(), "certificate chain") {
		t.Errorf("token of another TSA: %v", err)
	}
}

// TestSealStampRetried: the TSA is down when the day is sealed (status
// error:…), comes back, the stamp is retried and the bundle verifies
// with the TSA's CA; WORM files are written once and read-only.
func TestSealStampRetried(t *testing.T) {
	a := newTestTSA(t, "Test TSA")
	a.down.Store(true)
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	worm := t.TempDir()
	s := newTestService(t, db, clk, filepath.Join(t.TempDir(), "k"), func(c *Config) {
		c.TSAURL, c.WORMDir, c.StampRetry = a.srv.URL, worm, time.Hour
	})
	fill(t, s, clk, 3, 5)
	ctx := context.Background()
	s.stampPending(ctx)
	seal, err := db.LastComplianceCheckpoint(ctx, "daily")
	if err != nil {
		t.Fatal(err)
	}
	if seal.TSAStatus != "error:stamp reply: HTTP 503" {
		t.Fatalf("tsa_status %q", seal.TSAStatus)
	}
	a.down.Store(false)
	s.stampPending(ctx)
	if seal, _ = db.LastComplianceCheckpoint(ctx, "daily"); seal.TSAStatus != "ok" || len(seal.TSAToken) == 0 {
		t.Fatalf("after retry: tsa_status %q, token %d bytes", seal.TSAStatus, len(seal.TSAToken))
	}
	rep, err := Verify(bytes.NewReader(evidence(t, s, false)), VerifyOptions{Keys: []ed25519.PublicKey{s.PublicKey()}, TSARoots: a.roots(t)})
	if err != nil || rep.Stamped != 1 {
		t.Fatalf("verify: %v (%+v)", err, rep)
	}
	dayDir := filepath.Join(worm, "2026", "11", "23")
	for _, f := range []string{"seal.txt", "checkpoints.jsonl", "compliance.key.pub", "seal.tsr"} {
		st, err := os.Stat(filepath.Join(dayDir, f))
		if err != nil || st.Mode().Perm() != 0o444 {
			t.Fatalf("worm %s: %v %v", f, st, err)
		}
	}
	// A second seal of the same day never overwrites.
	before, _ := os.ReadFile(filepath.Join(dayDir, "seal.txt"))
	st, _ := ParseStatement(seal.Body)
	err = s.writeWORMDay(ctx, st)
	if err == nil || !errors.Is(err, os.ErrExist) {
		t.Fatalf("second worm write: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dayDir, "seal.txt"))
	if !bytes.Equal(before, after) || s.wormErrs.Load() == 0 {
		t.Fatalf("worm file changed or error not counted (%d)", s.wormErrs.Load())
	}
}
