package flows

import (
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/collectors/flows/replay"
)

func TestProtocol(t *testing.T) {
	for _, tt := range []struct {
		data []byte
		want string
	}{
		{[]byte{0, 5, 0, 1}, "netflow5"},
		{[]byte{0, 9, 0, 1}, "netflow9"},
		{[]byte{0, 10, 0, 1}, "ipfix"},
		{[]byte{0, 0, 0, 5, 0, 0, 0, 1}, "sflow5"},
		{[]byte{0, 0, 0, 4}, "unknown"},
		{[]byte{0, 9}, "unknown"},
		{nil, "unknown"},
	} {
		if got := Protocol(tt.data); got != tt.want {
			t.Errorf("Protocol(% x) = %s, want %s", tt.data, got, tt.want)
		}
	}
}

// TestPoisonIsolation (RELIABILITY 6): crash-shaped datagrams among valid
// ones: every valid flow arrives, and the rejected counter equals the
// number of poison datagrams.
func TestPoisonIsolation(t *testing.T) {
	ds, err := replay.Load("../../testdata/flows/netflow/softflowd-v9.pcap")
	if err != nil {
		t.Fatal(err)
	}
	per := flowsIn(nil, ds)
	sink := &countingSink{}
	reg := prometheus.NewRegistry()
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	c := New(slog.New(slog.DiscardHandler), cfg, sink, nil, reg)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("udp", c.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	poison := [][]byte{
		{0, 9, 0, 1, 0, 0}, // v9 header cut short
		{0, 10, 0, 200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, // IPFIX length beyond the datagram
		{0, 5, 0xff, 0xff, 0, 0, 0, 0},                      // v5 count overflowing the datagram
		{0, 0, 0, 5, 0, 0, 0, 9},                            // sFlow with an unknown agent address type
	}
	var want int64
	sentPoison := 0
	for round := range 3 {
		for i, d := range ds {
			if _, err := conn.Write(d.Data); err != nil {
				t.Fatal(err)
			}
			want += int64(per[i])
			if i%5 == 0 {
				if _, err := conn.Write(poison[(i+round)%len(poison)]); err != nil {
					t.Fatal(err)
				}
				sentPoison++
			}
			if i%50 == 0 {
				time.Sleep(time.Millisecond) // stay under the socket buffer
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for sink.flows.Load() < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = c.Stop()
	if got := sink.flows.Load(); got != want {
		t.Errorf("flows %d, want %d", got, want)
	}
	var rejected float64
	for _, proto := range []string{"netflow5", "netflow9", "ipfix", "sflow5"} {
		rejected += testutil.ToFloat64(c.m.rejected.WithLabelValues(proto, "malformed"))
	}
	if int(rejected) != sentPoison {
		t.Errorf("rejected %v, sent %d poison datagrams", rejected, sentPoison)
	}
}
