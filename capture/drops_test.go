package capture

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"netmon/capture/source"
	"netmon/store/record"
)

// dropSource reads nothing and reports the kernel drops the test sets.
type dropSource struct {
	mu      sync.Mutex
	dropped uint64
	closed  bool
}

func (s *dropSource) ReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	time.Sleep(2 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, gopacket.CaptureInfo{}, io.EOF
	}
	return nil, gopacket.CaptureInfo{}, source.ErrTimeout
}
func (s *dropSource) LinkType() layers.LinkType { return layers.LinkTypeEthernet }
func (s *dropSource) Stats() (source.Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return source.Stats{Dropped: s.dropped}, nil
}
func (s *dropSource) Close() error { s.mu.Lock(); s.closed = true; s.mu.Unlock(); return nil }
func (s *dropSource) set(n uint64) { s.mu.Lock(); s.dropped = n; s.mu.Unlock() }

// minuteSink keeps the minutes written.
type minuteSink struct {
	mu      sync.Mutex
	minutes []record.TrafficMinute
}

func (m *minuteSink) AddTrafficMinute(_ context.Context, tm record.TrafficMinute) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.minutes = append(m.minutes, tm)
	return nil
}
func (m *minuteSink) AddRemoteMinute(context.Context, int64, []record.RemoteTraffic) error {
	return nil
}

// dropsOf maps each written minute to its drops.
func (m *minuteSink) dropsOf() map[int64]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[int64]int64{}
	for _, tm := range m.minutes {
		out[tm.TS] += tm.Dropped
	}
	return out
}

// TestMinuteDrops: the kernel's cumulative drop count is written as the
// drops since the previous flush, into the last minute flushed (the SLA
// metric packet_drop), and a new capture starts again from its source's
// count.
func TestMinuteDrops(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0) // a whole minute
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var src *dropSource
	sink := &minuteSink{}
	c := New(slog.New(slog.DiscardHandler), DefaultConfig(), Deps{
		Open:    func(string) (source.Source, error) { src = &dropSource{}; return src, nil },
		Addrs:   func(string) ([]netip.Prefix, error) { return nil, nil },
		Minutes: sink, Now: clock,
	})
	if err := c.StartCapture("eth-test"); err != nil {
		t.Fatal(err)
	}
	m0 := int64(1_800_000_000)
	advance(90 * time.Second) // minute m0 is complete
	src.set(7)
	c.flush(false)
	advance(time.Minute) // m0+60 complete
	src.set(10)
	c.flush(false)
	c.flush(false) // nothing new: no minute, no drops
	src.set(12)
	if err := c.StopCapture(); err != nil { // the final, partial minute m0+120
		t.Fatal(err)
	}
	// A new capture's source counts from 0 again: 4 drops, not 4 - 12.
	if err := c.StartCapture("eth-test"); err != nil {
		t.Fatal(err)
	}
	advance(time.Minute)
	src.set(4)
	c.flush(false)
	if err := c.StopCapture(); err != nil {
		t.Fatal(err)
	}
	got := sink.dropsOf()
	want := map[int64]int64{m0: 7, m0 + 60: 3, m0 + 120: 2 + 4}
	for ts, n := range want {
		if got[ts] != n {
			t.Errorf("minute %d: %d drops, want %d (all: %v)", ts, got[ts], n, got)
		}
	}
	var total int64
	for _, n := range got {
		total += n
	}
	if total != 16 {
		t.Errorf("%d drops written, want 7 + 3 + 2 + 4 = 16 (%v)", total, got)
	}
}
