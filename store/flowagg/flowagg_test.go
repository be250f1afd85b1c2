package flowagg

import (
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"netmon/store/record"
)

var (
	exp1 = netip.MustParseAddr("192.0.2.1")
	exp2 = netip.MustParseAddr("2001:db8::1")
)

func flow(ts int64, exp netip.Addr, i int, proto uint8, octets uint64) record.Flow {
	return record.Flow{TS: ts, Exporter: exp, Src: netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}),
		Dst: netip.MustParseAddr("2001:db8::53"), SrcPort: uint16(i), DstPort: 53, Proto: proto, Packets: 1, Octets: octets}
}

// totals sums rows by what a query sums.
type totals struct{ records, packets, octets, flows, detail, other int64 }

func sum(ms []Minute) totals {
	var t totals
	for _, m := range ms {
		t.records += m.Records
		for _, r := range m.Rows {
			t.packets += int64(r.Packets)
			t.octets += int64(r.Octets)
			t.flows += int64(r.Flows)
			if r.Other {
				t.other++
			} else {
				t.detail++
			}
		}
	}
	return t
}

// TestBudget: a minute keeps MinuteRows 5-tuples with the most octets in
// detail and one other row per protocol for the rest, totals exact.
func TestBudget(t *testing.T) {
	now := time.Unix(1_800_000_030, 0)
	var fs []record.Flow
	for i := range 1000 {
		proto := uint8(6)
		if i%2 == 1 {
			proto = 17
		}
		fs = append(fs, flow(now.Unix(), exp1, i, proto, uint64(100+i)))
		fs = append(fs, flow(now.Unix()+1, exp1, i, proto, uint64(100+i))) // same 5-tuple again
	}
	ms := Sums(Config{MinuteRows: 10}, fs)
	if len(ms) != 1 {
		t.Fatalf("%d minutes, want 1", len(ms))
	}
	got := sum(ms)
	if got.records != 2000 || got.flows != 2000 || got.packets != 2000 || got.detail != 10 || got.other != 2 {
		t.Fatalf("totals %+v", got)
	}
	var want int64
	for i := range 1000 {
		want += 2 * int64(100+i)
	}
	if got.octets != want {
		t.Errorf("octets %d, want %d", got.octets, want)
	}
	for _, r := range ms[0].Rows[:10] {
		if r.Octets < 2*(100+990) || r.Flows != 2 || r.First != now.Unix() || r.Last != now.Unix()+1 || !r.Src.Is4() {
			t.Errorf("detail row %+v is not one of the ten biggest", r)
		}
	}
	if ms[0].TS != 1_800_000_000-1_800_000_000%60 {
		t.Errorf("minute %d", ms[0].TS)
	}
}

// TestKeyBound: a scan (a new 5-tuple per record) beyond MaxKeys sheds
// detail into other, not memory and not flows; closing frees the keys.
func TestKeyBound(t *testing.T) {
	var keys, held atomic.Int64
	a := New(Config{MinuteRows: 1 << 20, MaxKeys: 1000}, &keys, &held)
	now := time.Now()
	batch := make([]record.Flow, 0, 1000)
	for i := range 100_000 {
		batch = append(batch, flow(now.Unix(), exp1, i, 6, 1))
		if len(batch) == cap(batch) {
			a.Add(batch, now)
			batch = batch[:0]
		}
	}
	// The minute itself holds one key: 999 5-tuples in detail.
	if keys.Load() != 1000 || held.Load() != 100_000 || a.Folded() != 99_001 {
		t.Fatalf("keys %d, held %d, folded %d", keys.Load(), held.Load(), a.Folded())
	}
	got := sum(a.Due(now, true))
	if got.records != 100_000 || got.flows != 100_000 || got.detail != 999 || got.other != 1 {
		t.Errorf("totals %+v", got)
	}
	if keys.Load() != 0 || held.Load() != 0 || a.Open() != 0 {
		t.Errorf("after close: keys %d, held %d, open %d", keys.Load(), held.Load(), a.Open())
	}
}

// TestDeadlines: a current minute closes Grace after its end, a late one
// Grace after it opened, a future one within a minute; exporters apart.
func TestDeadlines(t *testing.T) {
	now := time.Unix(1_800_000_010, 0) // 10 s into a minute
	minute := now.Unix() - now.Unix()%60
	a := New(Config{Grace: 5 * time.Second}, nil, nil)
	a.Add([]record.Flow{
		flow(now.Unix(), exp1, 1, 6, 1),
		flow(now.Unix(), exp2, 1, 6, 1),
		flow(minute-3600, exp1, 2, 6, 1),     // an hour late
		flow(minute+7200, exp1, 3, 6, 1),     // two hours ahead
		flow(minute-3600+59, exp1, 4, 17, 1), // the same late minute
	}, now)
	cases := []struct {
		at   int64
		want int
	}{{now.Unix() + 4, 0}, {now.Unix() + 5, 1}, {minute + 64, 0}, {minute + 65, 2}, {now.Unix() + 65, 1}}
	for _, c := range cases {
		if got := len(a.Due(time.Unix(c.at, 0), false)); got != c.want {
			t.Errorf("at +%d s: %d minutes closed, want %d", c.at-now.Unix(), got, c.want)
		}
	}
	// A record for a closed minute opens it again: added, not lost.
	a.Add([]record.Flow{flow(minute, exp1, 1, 6, 7)}, time.Unix(minute+100, 0))
	ms := a.Due(time.Unix(minute+105, 0), false)
	if len(ms) != 1 || ms[0].TS != minute || ms[0].Rows[0].Octets != 7 {
		t.Errorf("late minute %+v", ms)
	}
}

// TestSpoofedExporters: a flood of exporters (each minute costs a key)
// beyond the bound goes to the minute's overflow, with no exporter and no
// detail; every record is still in some minute, memory bounded.
func TestSpoofedExporters(t *testing.T) {
	var keys atomic.Int64
	a := New(Config{MaxKeys: 100}, &keys, nil)
	now := time.Now()
	var fs []record.Flow
	for i := range 10_000 {
		exp := netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)})
		fs = append(fs, flow(now.Unix(), exp, i, 17, 10))
	}
	a.Add(fs, now)
	if keys.Load() > 100 || a.Open() > 100+1 {
		t.Fatalf("%d keys held, %d minutes open", keys.Load(), a.Open())
	}
	ms := a.Due(now, true)
	got := sum(ms)
	if got.records != 10_000 || got.flows != 10_000 || got.octets != 100_000 {
		t.Errorf("totals %+v", got)
	}
	var overflow *Minute
	for i := range ms {
		if !ms[i].Exporter.IsValid() {
			overflow = &ms[i]
		}
	}
	if overflow == nil || len(overflow.Rows) != 1 || !overflow.Rows[0].Other || overflow.Records < 9000 {
		t.Errorf("overflow minute %+v", overflow)
	}
	if keys.Load() != 0 {
		t.Errorf("%d keys held after close", keys.Load())
	}
}

// TestPeek: the open minutes read as they will be written (same detail,
// same other rows, same totals), and reading them changes nothing: the
// minute goes on summing, and closes once with every record.
func TestPeek(t *testing.T) {
	now := time.Unix(1_800_000_030, 0)
	a := New(Config{MinuteRows: 3}, nil, nil)
	var fs []record.Flow
	for i := range 10 {
		fs = append(fs, flow(now.Unix(), exp1, i, 6, uint64(100+i)))
	}
	a.Add(fs, now)
	peek := a.Peek()
	if got, want := sum(peek), (totals{records: 10, packets: 10, octets: 1045, flows: 10, detail: 3, other: 1}); got != want {
		t.Fatalf("peek %+v, want %+v", got, want)
	}
	if again := a.Peek(); sum(again) != sum(peek) {
		t.Fatalf("a second peek %+v, the first %+v: peeking changed the minute", sum(again), sum(peek))
	}
	a.Add(fs, now)
	ms := a.Due(now, true)
	if got, want := sum(ms), (totals{records: 20, packets: 20, octets: 2090, flows: 20, detail: 3, other: 1}); got != want {
		t.Fatalf("closed %+v, want %+v", got, want)
	}
	if len(a.Peek()) != 0 {
		t.Fatal("a closed minute still peeked")
	}
}
