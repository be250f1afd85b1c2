package agentmode

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/agentmode/state"
)

// refusal finds the error log of a refused hub certificate.
func refusal(logs string) (trusted, presented string, ok bool) {
	for _, line := range strings.Split(logs, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) != nil || e["level"] != "ERROR" || !strings.HasPrefix(e["msg"].(string), "hub certificate refused") {
			continue
		}
		tr, _ := e["trusted_ca_sha256"].(string)
		pr, _ := e["presented_ca_sha256"].(string)
		return tr, pr, true
	}
	return "", "", false
}

func TestTrustOnFirstUsePinsAndPresentsClientCert(t *testing.T) {
	ca := newTestCA(t, "hub CA")
	hub := newFakeHub(t, ca)
	ta := startAgent(t, hub, t.TempDir(), nil, nil)
	t.Cleanup(func() { dumpLogs(t, ta) })
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	ta.tick(t)
	waitFor(t, "the second batch", func() bool { return len(hub.seenNow().batches) == 2 })

	seen := hub.seenNow()
	if seen.hellos[0].CSRPEM == "" {
		t.Error("no CSR in the hello over https")
	}
	if st := ta.store.Get(); st.CAPEM != ca.pem {
		t.Error("hub CA not pinned in the state file")
	}
	if b, _ := os.ReadFile(ta.files.CA); string(b) != ca.pem {
		t.Errorf("%s does not hold the hub CA", ta.files.CA)
	}
	if ta.hub.trust.current() != modePinned {
		t.Errorf("trust mode %v after first use, want pinned", ta.hub.trust.current())
	}
	// The hello had no certificate yet; every later connection has one.
	for i, cn := range seen.clientCNs {
		if cn != "netmon-agent-1" {
			t.Errorf("telemetry call %d presented client CN %q, want netmon-agent-1", i, cn)
		}
	}
	if !strings.Contains(ta.logs.String(), "trusted on first use") {
		t.Error("pinning not logged")
	}

	// A restart trusts the pinned CA (no second first use) and presents
	// the certificate from its files.
	if err := ta.Stop(); err != nil {
		t.Fatal(err)
	}
	ta2 := startAgent(t, hub, filepath.Dir(ta.cfg.StatePath), nil, nil)
	waitFor(t, "the batch after restart", func() bool { return len(hub.seenNow().batches) == 3 })
	if ta2.hub.trust.current() != modePinned || strings.Contains(ta2.logs.String(), "first server certificate will be trusted") {
		t.Error("restarted agent did not use the pinned CA")
	}
	if cns := hub.seenNow().clientCNs; cns[len(cns)-1] != "netmon-agent-1" {
		t.Errorf("client CN after restart %q", cns[len(cns)-1])
	}
}

func TestSwappedHubCARefused(t *testing.T) {
	ca := newTestCA(t, "hub CA")
	hub := newFakeHub(t, ca)
	dir := t.TempDir()
	ta := startAgent(t, hub, dir, nil, nil)
	t.Cleanup(func() { dumpLogs(t, ta) })
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })

	// Someone else answers at the hub's address, with another CA.
	other := newTestCA(t, "impostor CA")
	hub.swapServerCert(other.serverCert(t))
	before := hub.seenNow()
	ta.tick(t)
	waitFor(t, "the refusal", func() bool { _, _, ok := refusal(ta.logs.String()); return ok })
	tr, pr, _ := refusal(ta.logs.String())
	if tr != fingerprint(ca.cert) || pr != fingerprint(other.cert) {
		t.Errorf("refusal names trusted %s presented %s, want %s and %s", tr, pr, fingerprint(ca.cert), fingerprint(other.cert))
	}
	waitFor(t, "the batch to be queued", func() bool { return ta.queue.Len() == 1 })
	after := hub.seenNow()
	if after.calls != before.calls || len(after.hellos) != len(before.hellos) {
		t.Errorf("the impostor received %d telemetry calls and %d hellos", after.calls-before.calls, len(after.hellos)-len(before.hellos))
	}
	if err := ta.Stop(); err != nil {
		t.Fatal(err)
	}

	// The pin holds across a restart: still refused, still nothing sent.
	ta2 := startAgent(t, hub, dir, nil, nil)
	waitFor(t, "the refusal after restart", func() bool { _, _, ok := refusal(ta2.logs.String()); return ok })
	if got := hub.seenNow(); got.calls != before.calls || len(got.hellos) != len(before.hellos) {
		t.Error("restarted agent sent data to the impostor")
	}
	if st, _ := state.Read(ta2.cfg.StatePath); st.CAPEM != ca.pem {
		t.Error("the pinned CA was replaced")
	}
}

func TestHubCAFile(t *testing.T) {
	ca := newTestCA(t, "hub CA")
	other := newTestCA(t, "other CA")
	tests := []struct {
		desc     string
		caFile   *testCA
		host     string // instead of 127.0.0.1, the name in the certificate
		wantSent bool
		wantLog  string // for a refusal: what the error log says
	}{
		{"matching -hub-ca: enrolls and sends", ca, "", true, ""},
		{"another CA in -hub-ca: refused before the hello", other, "", false, "hub certificate refused"},
		{"right CA, host name not in the certificate: refused", ca, "localhost", false, "does not name localhost"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			hub := newFakeHub(t, ca)
			dir := t.TempDir()
			caPath := filepath.Join(dir, "hub-ca.pem")
			if err := os.WriteFile(caPath, []byte(tt.caFile.pem), 0o600); err != nil {
				t.Fatal(err)
			}
			ta := startAgent(t, hub, dir, func(c *Config) {
				c.HubCAFile = caPath
				if tt.host != "" {
					c.HubURL = strings.Replace(c.HubURL, "127.0.0.1", tt.host, 1)
				}
			}, nil)
			t.Cleanup(func() { dumpLogs(t, ta) })
			if ta.hub.trust.current() != modeOperator {
				t.Fatalf("trust mode %v", ta.hub.trust.current())
			}
			if tt.wantSent {
				waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
				if cn := hub.seenNow().clientCNs[0]; cn != "netmon-agent-1" {
					t.Errorf("client CN %q", cn)
				}
				if ta.store.Get().CAPEM != "" {
					t.Error("-hub-ca mode pinned a CA")
				}
				return
			}
			waitFor(t, "the refusal", func() bool { return strings.Contains(ta.logs.String(), tt.wantLog) })
			if tt.caFile == other {
				tr, pr, _ := refusal(ta.logs.String())
				if tr != fingerprint(other.cert) || pr != fingerprint(ca.cert) {
					t.Errorf("refusal names trusted %s presented %s", tr, pr)
				}
			}
			if s := hub.seenNow(); len(s.hellos) != 0 || s.calls != 0 {
				t.Errorf("hub received %d hellos and %d telemetry calls", len(s.hellos), s.calls)
			}
			if ta.store.Get().Enrolled() {
				t.Error("enrolled through a refused hub")
			}
		})
	}
}

func TestFirstUseRefusesCANotSigningTheServer(t *testing.T) {
	ca := newTestCA(t, "hub CA")
	hub := newFakeHub(t, ca)
	hub.returnCA = newTestCA(t, "unrelated CA").pem
	bo := &backoffRecorder{hold: true, release: make(chan time.Time)}
	ta := startAgent(t, hub, t.TempDir(), nil, bo)
	waitFor(t, "the refusal", func() bool { return len(bo.got()) == 1 })
	if _, _, ok := refusal(ta.logs.String()); !ok {
		t.Errorf("no refusal logged:\n%s", ta.logs.String())
	}
	st := ta.store.Get()
	if st.CAPEM != "" || st.Enrolled() {
		t.Errorf("pinned %v enrolled %v, want neither", st.CAPEM != "", st.Enrolled())
	}
	if ta.hub.trust.current() != modeTOFU {
		t.Errorf("trust mode %v", ta.hub.trust.current())
	}
	if hub.seenNow().calls != 0 {
		t.Error("telemetry sent")
	}
}

func TestClientCertRenewedAtHalfLife(t *testing.T) {
	ca := newTestCA(t, "hub CA")
	hub := newFakeHub(t, ca)
	// The hub issues and checks certificates on the agent's fake clock.
	ta := newAgent(t, hub, t.TempDir(), nil, nil)
	hub.setNow(ta.clock.Now)
	if err := ta.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ta.Stop(); dumpLogs(t, ta) })
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	first := ta.hub.trust.leaf()

	// 44 days into 90: not due.
	ta.jump(t, 44*24*time.Hour)
	waitFor(t, "the second batch", func() bool { return len(hub.seenNow().batches) == 2 })
	if n := hub.seenNow().certCalls; n != 0 {
		t.Fatalf("renewed %d times before half life", n)
	}
	// At 45 days: renewed before the next batch goes out.
	ta.jump(t, 24*time.Hour)
	waitFor(t, "the third batch", func() bool { return len(hub.seenNow().batches) == 3 })
	seen := hub.seenNow()
	if seen.certCalls != 1 {
		t.Fatalf("%d renewals, want 1", seen.certCalls)
	}
	renewed := ta.hub.trust.leaf()
	if renewed.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Fatal("certificate not replaced")
	}
	if got := seen.clientSer[len(seen.clientSer)-1]; got != renewed.SerialNumber.String() {
		t.Errorf("last telemetry presented serial %s, want the renewed %s", got, renewed.SerialNumber)
	}
	onDisk, err := os.ReadFile(ta.files.Cert)
	if err != nil || !strings.Contains(string(onDisk), "CERTIFICATE") {
		t.Fatalf("certificate file: %v", err)
	}
	// The renewed certificate is fresh: no second renewal at the next batch.
	ta.tick(t)
	waitFor(t, "the fourth batch", func() bool { return len(hub.seenNow().batches) == 4 })
	if n := hub.seenNow().certCalls; n != 1 {
		t.Errorf("%d renewals, want 1", n)
	}
}

func TestRenewalDue(t *testing.T) {
	now := time.Now()
	life := func(d time.Duration) *x509.Certificate {
		return &x509.Certificate{NotBefore: now, NotAfter: now.Add(d)}
	}
	tests := []struct {
		desc string
		leaf *x509.Certificate
		at   time.Time
		want bool
	}{
		{"no certificate", nil, now, true},
		{"fresh", life(90 * 24 * time.Hour), now.Add(time.Hour), false},
		{"just before half", life(90 * 24 * time.Hour), now.Add(45*24*time.Hour - time.Second), false},
		{"at half", life(90 * 24 * time.Hour), now.Add(45 * 24 * time.Hour), true},
		{"expired", life(time.Hour), now.Add(2 * time.Hour), true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := renewalDue(tt.leaf, tt.at); got != tt.want {
				t.Errorf("renewalDue = %v, want %v", got, tt.want)
			}
		})
	}
}
