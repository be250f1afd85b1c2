package flows

import (
	"encoding/binary"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// v5At is a NetFlow v5 datagram of n records whose header clock is
// export and whose records ended one second before it.
func v5At(export time.Time, n int) []byte {
	const uptime = 600_000
	b := make([]byte, 24+48*n)
	binary.BigEndian.PutUint16(b[0:], 5)
	binary.BigEndian.PutUint16(b[2:], uint16(n))
	binary.BigEndian.PutUint32(b[4:], uptime)
	binary.BigEndian.PutUint32(b[8:], uint32(export.Unix()))
	for i := range n {
		r := b[24+48*i:]
		copy(r[0:4], []byte{10, 0, 0, byte(i + 1)})
		copy(r[4:8], []byte{203, 0, 113, 7})
		binary.BigEndian.PutUint32(r[16:], 1)
		binary.BigEndian.PutUint32(r[20:], 100)
		binary.BigEndian.PutUint32(r[24:], uptime-2000)
		binary.BigEndian.PutUint32(r[28:], uptime-1000)
		r[38] = 6
	}
	return b
}

// TestRetime: records of an exporter replaying a capture (14 days old) or
// whose clock is an hour ahead are placed at their receive time and
// counted per exporter and direction; plausible ones keep their time.
func TestRetime(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := New(slog.New(slog.DiscardHandler), DefaultConfig(), &countingSink{}, nil, reg)
	at := time.Unix(1_780_000_000, 0)
	cases := []struct {
		exporter string
		export   time.Time
		n        int
		wantTS   int64
	}{
		{"192.0.2.1", at.Add(-14 * 24 * time.Hour), 240, at.Unix()},
		{"192.0.2.2", at.Add(-2 * time.Minute), 3, at.Unix() - 121},
		{"192.0.2.3", at.Add(time.Hour), 2, at.Unix()},
		{"192.0.2.4", at.Add(-59 * time.Minute), 1, at.Unix() - 59*60 - 1}, // inside the hour
	}
	for _, tc := range cases {
		data := v5At(tc.export, tc.n)
		buf := data
		out := c.decode(datagram{buf: &buf, n: len(data), from: netip.MustParseAddr(tc.exporter), at: at}, nil)
		if len(out) != tc.n {
			t.Fatalf("%s: %d records", tc.exporter, len(out))
		}
		for _, f := range out {
			if f.TS != tc.wantTS {
				t.Fatalf("%s: ts %d, want %d", tc.exporter, f.TS, tc.wantTS)
			}
		}
	}
	want := []ExporterStatus{
		{Exporter: "192.0.2.1", Flows: 240, LastSeen: at.Unix(), Retimed: 240, OffsetSeconds: 14*86400 + 1, RetimedAt: at.Unix()},
		{Exporter: "192.0.2.2", Flows: 3, LastSeen: at.Unix()},
		{Exporter: "192.0.2.3", Flows: 2, LastSeen: at.Unix(), Retimed: 2, OffsetSeconds: -3599, RetimedAt: at.Unix()},
		{Exporter: "192.0.2.4", Flows: 1, LastSeen: at.Unix()},
	}
	if diff := cmp.Diff(c.Exporters(), want); diff != "" {
		t.Errorf("exporters (-got, +want):\n%s", diff)
	}
	if p, f := testutil.ToFloat64(c.m.retimed.WithLabelValues("past")), testutil.ToFloat64(c.m.retimed.WithLabelValues("future")); p != 240 || f != 2 {
		t.Errorf("retimed past %v future %v, want 240 and 2", p, f)
	}
	// Off (0) keeps every time as the exporter gave it.
	cfg := DefaultConfig()
	cfg.ClockBehind, cfg.ClockAhead = 0, 0
	off := New(slog.New(slog.DiscardHandler), cfg, &countingSink{}, nil, nil)
	data := v5At(at.Add(-14*24*time.Hour), 1)
	out := off.decode(datagram{buf: &data, n: len(data), from: netip.MustParseAddr("192.0.2.1"), at: at}, nil)
	if out[0].TS != at.Unix()-14*86400-1 {
		t.Errorf("unchecked: ts %d", out[0].TS)
	}
}
