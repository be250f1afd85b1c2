package syslog

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/collectors/udpsock"
	"netmon/store/record"
)

// memSink is an in-memory record.Sink: the sink is our own interface, not
// a network edge, so a slice behind a mutex is the real thing for these
// tests. It refuses batches once it holds max events (0 = no limit).
type memSink struct {
	mu     sync.Mutex
	events []record.SyslogEvent
	max    int
}

func (s *memSink) PutFlows([]record.Flow) bool          { return false }
func (s *memSink) PutTelemetry([]record.Telemetry) bool { return false }

func (s *memSink) PutSyslog(es []record.SyslogEvent) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.max > 0 && len(s.events)+len(es) > s.max {
		return false
	}
	s.events = append(s.events, es...)
	return true
}

func (s *memSink) snapshot() []record.SyslogEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]record.SyslogEvent(nil), s.events...)
}

// startReceiver starts a receiver on a free loopback port and stops it at
// the end of the test.
func startReceiver(t *testing.T, cfg Config, sink record.Sink) *Receiver {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	r := New(nil, cfg, sink, prometheus.NewRegistry())
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// counts are the receiver's counters.
type counts struct{ received, accepted, rejected, dropped float64 }

func (r *Receiver) counts() counts {
	return counts{
		received: testutil.ToFloat64(r.m.received),
		accepted: testutil.ToFloat64(r.m.accepted),
		rejected: testutil.ToFloat64(r.m.rejEmpty) + testutil.ToFloat64(r.m.rejNoPRI) +
			testutil.ToFloat64(r.m.rejBadPRI) + testutil.ToFloat64(r.m.rejOversize),
		dropped: testutil.ToFloat64(r.m.dropFull),
	}
}

// waitSettled waits until n datagrams were read or dropped by the kernel
// and every one read is accounted for (accepted, rejected or dropped), or
// fails after d.
func waitSettled(t *testing.T, r *Receiver, n float64, d time.Duration) counts {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		c := r.counts()
		if c.received+float64(udpsock.KernelDrops(r.inode.Load())) >= n && c.received == c.accepted+c.rejected+c.dropped {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("not settled after %v: %+v, want %v received (kernel drops %d)", d, c, n, udpsock.KernelDrops(r.inode.Load()))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// loggerCmd runs util-linux logger against the receiver; without logger
// the test is skipped, except under CI=true where it must be there.
func loggerCmd(t *testing.T, r *Receiver, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("logger"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("logger (bsdutils) is required under CI")
		}
		t.Skip("logger not installed (apt-get install bsdutils)")
	}
	port := r.Addr().(*net.UDPAddr).Port
	cmd := exec.Command("logger", append([]string{"-d", "-n", "127.0.0.1", "-P", fmt.Sprint(port)}, args...)...)
	cmd.Env = append(os.Environ(), "TZ=UTC") // RFC 3164 times carry no zone
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("logger %v: %v: %s", args, err, out)
	}
}

// loggerHost is the HOSTNAME logger writes: the host name up to its
// first dot.
func loggerHost(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ = strings.Cut(h, ".")
	return h
}

// TestLogger sends with the real logger (PEERS.md) and checks every field
// of what reaches the sink.
func TestLogger(t *testing.T) {
	sink := &memSink{}
	r := startReceiver(t, Config{FlushInterval: 10 * time.Millisecond}, sink)
	before := time.Now().Unix()
	loggerCmd(t, r, "--rfc3164", "-t", "app", "-p", "local0.warning", "msg")
	loggerCmd(t, r, "--rfc5424", "-t", "app", "-p", "local0.warning", "msg 5424")
	loggerCmd(t, r, "--rfc3164", "-t", "bulk", "-p", "user.notice", "-f", filepath.Join(testdataDir, "lines.txt"))
	lines, err := os.ReadFile(filepath.Join(testdataDir, "lines.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bulk := strings.Split(strings.TrimRight(string(lines), "\n"), "\n")
	c := waitSettled(t, r, float64(2+len(bulk)), 5*time.Second)
	if c.accepted != c.received || c.rejected+c.dropped != 0 {
		t.Fatalf("counters %+v: want all accepted", c)
	}
	got := sink.snapshot()
	host := loggerHost(t)
	want := []record.SyslogEvent{
		{Host: host, Source: loopback, Severity: 4, Facility: 16, Tag: "app", Message: "msg"},
		{Host: host, Source: loopback, Severity: 4, Facility: 16, Tag: "app", Message: "msg 5424"},
	}
	for _, l := range bulk {
		want = append(want, record.SyslogEvent{Host: host, Source: loopback, Severity: 5, Facility: 1, Tag: "bulk", Message: l})
	}
	after := time.Now().Unix()
	for i := range got {
		if got[i].TS < before-1 || got[i].TS > after {
			t.Errorf("event %d: TS %d outside [%d, %d]", i, got[i].TS, before-1, after)
		}
		got[i].TS = 0
	}
	// Two workers may hand their batches in either order: compare as sets.
	less := func(a, b record.SyslogEvent) bool { return a.Message < b.Message }
	if diff := cmp.Diff(got, want, addrCmp, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("events (-got, +want):\n%s", diff)
	}
}

// TestReceiverHostile is RELIABILITY.md cases 4 and 6 over the socket:
// hostile datagrams among valid ones; each is stored or counted, by reason.
func TestReceiverHostile(t *testing.T) {
	sink := &memSink{}
	r := startReceiver(t, Config{MaxMessage: 8192, FlushInterval: 10 * time.Millisecond}, sink)
	conn, err := net.DialUDP("udp", nil, r.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sends := []struct {
		data   string
		reason string // "" = stored
	}{
		{"<13>Nov 21 12:00:00 host app: before\x00after", ""},
		{"<13>Nov 21 12:00:00 host app: bad \xff\xfe bytes", ""},
		{"<13>Nov 21 12:00:00 host app: line1\r\nline2", ""},
		{"<13>Nov 21 12:00:00 host app: " + strings.Repeat("y", 8192-30), ""}, // exactly MaxMessage
		{"<13>Nov 21 12:00:00 host app: " + strings.Repeat("x", 64<<10-100), reasonOversize},
		{"<13>Nov 21 12:00:00 host app: " + strings.Repeat("z", 8192-29), reasonOversize}, // one byte over
		{"", reasonEmpty},
		{"no pri at all", reasonNoPRI},
		{"<192>Nov 21 12:00:00 host app: x", reasonBadPRI},
		{"<13>ok", ""},
	}
	stored := 0
	for _, s := range sends {
		if _, err := conn.Write([]byte(s.data)); err != nil {
			t.Fatalf("send %d bytes: %v", len(s.data), err)
		}
		if s.reason == "" {
			stored++
		}
	}
	c := waitSettled(t, r, float64(len(sends)), 5*time.Second)
	if int(c.accepted) != stored || int(c.rejected) != len(sends)-stored {
		t.Fatalf("counters %+v, want %d accepted", c, stored)
	}
	for _, reason := range []string{reasonOversize, reasonEmpty, reasonNoPRI, reasonBadPRI} {
		want := 0
		for _, s := range sends {
			if s.reason == reason {
				want++
			}
		}
		if got := testutil.ToFloat64(r.m.rejected.WithLabelValues(reason)); int(got) != want {
			t.Errorf("rejected{%s} = %v, want %d", reason, got, want)
		}
	}
	found := false
	for _, ev := range sink.snapshot() {
		if strings.HasPrefix(ev.Message, "yyyy") {
			found = true
			if len(ev.Message) != 8192-30 {
				t.Errorf("MaxMessage-long message stored with %d bytes", len(ev.Message))
			}
		}
	}
	if !found {
		t.Error("the MaxMessage-long message was not stored")
	}
}

// TestSinkFull checks the drop path: a sink that refuses everything gets
// every event counted as dropped, and conservation still holds.
func TestSinkFull(t *testing.T) {
	r := startReceiver(t, Config{FlushInterval: 10 * time.Millisecond}, refusingSink{})
	conn, err := net.DialUDP("udp", nil, r.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for i := range 50 {
		fmt.Fprintf(conn, "<13>Nov 21 12:00:00 host app: %d", i)
	}
	c := waitSettled(t, r, 50, 5*time.Second)
	if c.dropped != 50 || c.accepted != 0 {
		t.Fatalf("counters %+v, want 50 dropped", c)
	}
}

// refusingSink refuses every batch, as a full ingest queue does.
type refusingSink struct{}

func (refusingSink) PutFlows([]record.Flow) bool          { return false }
func (refusingSink) PutSyslog([]record.SyslogEvent) bool  { return false }
func (refusingSink) PutTelemetry([]record.Telemetry) bool { return false }

// TestStopFlushes checks that Stop hands the last partial batch to the
// sink before returning, whatever the flush interval.
func TestStopFlushes(t *testing.T) {
	sink := &memSink{}
	r := New(nil, Config{Addr: "127.0.0.1:0", FlushInterval: time.Hour, BatchSize: 1000}, sink, nil)
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialUDP("udp", nil, r.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		fmt.Fprint(conn, "<13>x")
	}
	conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(r.m.received) < 10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if n := len(sink.snapshot()); n != 10 {
		t.Fatalf("%d events after Stop, want 10", n)
	}
	if err := r.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

// TestLifecycle covers the edges: off, bind failure, Stop before Start.
func TestLifecycle(t *testing.T) {
	off := New(nil, Config{}, &memSink{}, nil)
	if err := off.Start(); err != nil || off.Addr() != nil {
		t.Fatalf("Addr \"\": Start = %v, Addr = %v; want off", err, off.Addr())
	}
	if err := New(nil, Config{Addr: "127.0.0.1:0"}, &memSink{}, nil).Stop(); err != nil {
		t.Fatalf("Stop before Start: %v", err)
	}
	r := startReceiver(t, Config{}, &memSink{})
	if err := r.Start(); err == nil {
		t.Fatal("second Start succeeded")
	}
	busy := New(nil, Config{Addr: r.Addr().String()}, &memSink{}, nil)
	if err := busy.Start(); err == nil {
		busy.Stop()
		t.Fatal("Start on a bound port succeeded")
	}
	if got := udpsock.SetReadBuffer(r.conn, 8<<20); got < 8<<20 && os.Geteuid() == 0 {
		t.Errorf("as root the read buffer is %d, want at least 8 MiB", got)
	}
}

// TestReceiverAltered is RELIABILITY.md case 4's "stored byte-exact or
// counted" over the socket: a datagram with NUL and invalid UTF-8 reaches
// the sink with U+FFFD in its text and Raw equal to the bytes sent, and is
// counted once under each reason; a clean datagram, and one whose only NUL
// is trailing framing, carry no Raw and count nothing; a batch the sink
// refuses is counted as dropped, not as altered.
func TestReceiverAltered(t *testing.T) {
	dirty := []byte("<13>Nov 24 10:00:00 host app: a\x00b \xff\xfe end\n")
	clean := []byte("<13>Nov 24 10:00:00 host app: clean ünïcödé\n")
	framed := []byte("<13>Nov 24 10:00:00 host app: framed\x00")
	send := func(t *testing.T, r *Receiver, ds ...[]byte) {
		t.Helper()
		conn, err := net.DialUDP("udp", nil, r.Addr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, d := range ds {
			if _, err := conn.Write(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	altered := func(r *Receiver) map[string]float64 {
		return map[string]float64{
			reasonInvalidUTF8: testutil.ToFloat64(r.m.altered.WithLabelValues(reasonInvalidUTF8)),
			reasonNUL:         testutil.ToFloat64(r.m.altered.WithLabelValues(reasonNUL)),
		}
	}

	t.Run("accepted", func(t *testing.T) {
		sink := &memSink{}
		r := startReceiver(t, Config{FlushInterval: 10 * time.Millisecond}, sink)
		send(t, r, clean, dirty, framed)
		if c := waitSettled(t, r, 3, 5*time.Second); c.accepted != 3 {
			t.Fatalf("counters %+v, want 3 accepted", c)
		}
		want := map[string]record.SyslogEvent{
			"a\uFFFDb \uFFFD\uFFFD end": {Host: "host", Source: loopback, Facility: 1, Severity: 5, Tag: "app",
				Message: "a\uFFFDb \uFFFD\uFFFD end", Raw: dirty},
			"clean ünïcödé": {Host: "host", Source: loopback, Facility: 1, Severity: 5, Tag: "app", Message: "clean ünïcödé"},
			"framed":        {Host: "host", Source: loopback, Facility: 1, Severity: 5, Tag: "app", Message: "framed"},
		}
		got := map[string]record.SyslogEvent{}
		for _, ev := range sink.snapshot() {
			ev.TS = 0
			got[ev.Message] = ev
		}
		if diff := cmp.Diff(got, want, addrCmp); diff != "" {
			t.Errorf("events (-got, +want):\n%s", diff)
		}
		if diff := cmp.Diff(altered(r), map[string]float64{reasonInvalidUTF8: 1, reasonNUL: 1}); diff != "" {
			t.Errorf("netmon_syslog_altered_total (-got, +want):\n%s", diff)
		}
	})

	t.Run("dropped", func(t *testing.T) {
		r := startReceiver(t, Config{FlushInterval: 10 * time.Millisecond}, refusingSink{})
		send(t, r, dirty)
		if c := waitSettled(t, r, 1, 5*time.Second); c.dropped != 1 {
			t.Fatalf("counters %+v, want 1 dropped", c)
		}
		if diff := cmp.Diff(altered(r), map[string]float64{reasonInvalidUTF8: 0, reasonNUL: 0}); diff != "" {
			t.Errorf("netmon_syslog_altered_total (-got, +want):\n%s", diff)
		}
	})
}
