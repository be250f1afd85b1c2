package compliance

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

type nopSink struct{}

func (nopSink) PutFlows([]record.Flow) bool          { return true }
func (nopSink) PutSyslog([]record.SyslogEvent) bool  { return true }
func (nopSink) PutTelemetry([]record.Telemetry) bool { return true }
func (nopSink) PutDeep([]record.Deep) bool           { return true }

var day0 = time.Date(2026, 11, 23, 22, 10, 0, 0, time.UTC)

// newTestService starts a service on db with a key in dir.
func newTestService(t testing.TB, db *store.DB, clk *clock, keyFile string, mod func(*Config)) *Service {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Enabled, cfg.KeyFile, cfg.Tick = true, keyFile, time.Hour
	if mod != nil {
		mod(&cfg)
	}
	s := New(storetest.Logger(t), cfg, Deps{DB: db, Now: clk.Now})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

func flow(i int) record.Flow {
	return record.Flow{TS: day0.Unix() + int64(i), Exporter: netip.MustParseAddr("192.0.2.1"),
		Src: netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), Dst: netip.MustParseAddr("203.0.113.9"),
		SrcPort: uint16(40000 + i%1000), DstPort: 443, Proto: 6, Packets: uint64(i + 1), Octets: uint64(100 * (i + 1))}
}

// fill writes n flows and a syslog line per hour over hours hours,
// starting at day0, and leaves the clock after the last hour's end (so
// every hour, and the two days crossed, are sealed).
func fill(t testing.TB, s *Service, clk *clock, hours, n int) {
	t.Helper()
	sink := s.Tee(nopSink{})
	for h := range hours {
		clk.Set(day0.Add(time.Duration(h) * time.Hour))
		fs := make([]record.Flow, n)
		for i := range fs {
			fs[i] = flow(h*n + i)
		}
		sink.PutFlows(fs)
		sink.PutSyslog([]record.SyslogEvent{{TS: clk.Now().Unix(), Host: "fw-office", Source: netip.MustParseAddr("192.0.2.77"),
			Severity: 5, Facility: 4, Tag: "sshd", Message: "Accepted password for alice from 198.51.100.23 port 52011 ssh2 mac 00:1a:2b:3c:4d:5e"}})
		s.Flush(context.Background())
	}
	clk.Set(day0.Add(time.Duration(hours)*time.Hour + time.Minute))
	s.Flush(context.Background())
}

func evidence(t testing.TB, s *Service, mask bool) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.Evidence(context.Background(), &b, day0.Truncate(24*time.Hour), day0.Add(48*time.Hour).Truncate(24*time.Hour), mask); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestChainVerifies(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	key := filepath.Join(t.TempDir(), "compliance.key")
	s := newTestService(t, db, clk, key, nil)
	fill(t, s, clk, 4, 50)
	n, err := db.ComplianceCount(context.Background())
	if err != nil || n != 4*51 {
		t.Fatalf("records %d (%v), want %d", n, err, 4*51)
	}
	rep, err := Verify(bytes.NewReader(evidence(t, s, false)), VerifyOptions{Keys: []ed25519.PublicKey{s.PublicKey()}})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	// day0 22:10 + 4 h: hours 22, 23 (day sealed), 00, 01 of the next day.
	if rep.Records != 204 || rep.Hourly != 4 || rep.Daily != 1 {
		t.Fatalf("report %+v", rep)
	}
}

// TestMaskedBundle: no raw address, MAC or user name in a masked bundle,
// yet it verifies; the same address maps to the same pseudonym.
func TestMaskedBundle(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	s := newTestService(t, db, clk, filepath.Join(t.TempDir(), "k"), nil)
	fill(t, s, clk, 3, 20)
	b := evidence(t, s, true)
	for _, raw := range []string{"192.0.2.1", "10.1.0.", "203.0.113.9", "192.0.2.77", "198.51.100.23", "00:1a:2b:3c:4d:5e", "alice", "fw-office"} {
		if bytes.Contains(b, []byte(raw)) {
			t.Errorf("masked bundle contains %q", raw)
		}
	}
	if _, err := Verify(bytes.NewReader(b), VerifyOptions{Keys: []ed25519.PublicKey{s.PublicKey()}}); err != nil {
		t.Fatalf("verify masked: %v", err)
	}
	var got struct {
		Logs []BundleLog `json:"logs"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Logs[0].F[0] != got.Logs[1].F[0] || !strings.HasPrefix(got.Logs[0].F[0], "ip-") {
		t.Fatalf("exporter pseudonyms %q %q: want one stable ip-… pseudonym", got.Logs[0].F[0], got.Logs[1].F[0])
	}
}

// TestRestartContinuesChain: a new service on the same database (a
// restart, or a kill -9: the state is rebuilt from what is committed)
// continues the chain and the tree.
func TestRestartContinuesChain(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	key := filepath.Join(t.TempDir(), "k")
	s := newTestService(t, db, clk, key, nil)
	sink := s.Tee(nopSink{})
	sink.PutFlows([]record.Flow{flow(1), flow(2)})
	s.Flush(context.Background())
	_ = s.Stop()
	s2 := newTestService(t, db, clk, key, nil)
	clk.Set(day0.Add(10 * time.Minute))
	s2.Tee(nopSink{}).PutFlows([]record.Flow{flow(3)})
	clk.Set(day0.Add(3 * time.Hour))
	s2.Flush(context.Background())
	// Seq 3 went into the chain at the flush, in the still open hour
	// 01:00: chained, not signed yet, and said so.
	keys := VerifyOptions{Keys: []ed25519.PublicKey{s2.PublicKey()}}
	rep, err := Verify(bytes.NewReader(evidence(t, s2, false)), keys)
	var open *UnsealedError
	if !errors.As(err, &open) || *open != (UnsealedError{SignedThrough: 2, First: 3, Last: 3}) || rep.Records != 3 || rep.Signed != 2 {
		t.Fatalf("verify after restart, hour open: %v (%+v)", err, rep)
	}
	clk.Set(day0.Add(4 * time.Hour))
	s2.Flush(context.Background())
	if rep, err := Verify(bytes.NewReader(evidence(t, s2, false)), keys); err != nil || rep.Signed != 3 {
		t.Fatalf("verify after restart, hour closed: %v (%+v)", err, rep)
	}
}

// TestTimeDrift: a checkpoint signed by a clock ahead of the system's
// raises time_drift (the hook is called once) and the status shows it.
func TestTimeDrift(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	key := filepath.Join(t.TempDir(), "k")
	s := newTestService(t, db, clk, key, nil)
	fill(t, s, clk, 2, 1)
	_ = s.Stop()
	clk.Set(day0.Add(-time.Hour)) // the system clock went back
	var msgs []string
	cfg := DefaultConfig()
	cfg.Enabled, cfg.KeyFile, cfg.Tick = true, key, time.Hour
	s2 := New(storetest.Logger(t), cfg, Deps{DB: db, Now: clk.Now, OnDrift: func(m string) { msgs = append(msgs, m) }})
	if err := s2.Start(); err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	st, err := s2.Status(context.Background())
	if err != nil || !st.TimeDrift || len(msgs) != 1 || !strings.Contains(msgs[0], "ahead of the system clock") {
		t.Fatalf("status %+v err %v drift messages %q", st, err, msgs)
	}
	if st.LastHourly == nil || st.LastHourly.Hour != "2026-11-23T23:00:00Z" || st.LastDaily == nil || st.LastDaily.Day != "2026-11-23" || st.LastDaily.TSAStatus != "none" {
		t.Fatalf("last statements %+v %+v", st.LastHourly, st.LastDaily)
	}
}

// TestWORMUnwritable: a -worm-dir that cannot be written (here a file in
// its place; a read-only mount or a full disk fail the same call) is
// reported in the status and the metric, and the seal is still made.
func TestWORMUnwritable(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	bad := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(bad, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := DefaultConfig()
	cfg.Enabled, cfg.KeyFile, cfg.Tick, cfg.WORMDir = true, filepath.Join(t.TempDir(), "k"), time.Hour, bad
	s := New(storetest.Logger(t), cfg, Deps{DB: db, Registry: reg, Now: clk.Now})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	fill(t, s, clk, 2, 1)
	st, err := s.Status(context.Background())
	if err != nil || st.WORMErrors != 1 || !strings.Contains(st.WORMError, "not a directory") || st.LastDaily == nil || !strings.HasPrefix(st.LastDaily.WORM, "error:worm:") {
		t.Fatalf("status %+v (%v)", st, err)
	}
	if got := testutil.ToFloat64(s.m.wormErrors); got != 1 {
		t.Fatalf("netmon_compliance_worm_errors_total %v", got)
	}
}
