package capture

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetrics: the collector registers, and exports what the engine
// counted (corrupt.pcap: 17 frames, 4 decode and 2 DNS errors, see
// TestReplayFixtures).
func TestMetrics(t *testing.T) {
	c := New(slog.New(slog.DiscardHandler), DefaultConfig(), Deps{})
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c.Collector()); err != nil {
		t.Fatalf("register: %v", err)
	}
	if n := testutil.CollectAndCount(c.Collector()); n != 9 {
		t.Errorf("before any capture: %d series, want 9 (all zero)", n)
	}
	e, _ := replayFile(t, "corrupt.pcap")
	c.mu.Lock()
	c.engine, c.device = e, "eth0"
	c.mu.Unlock()
	want := `
# HELP netmon_capture_decode_errors_total Frames with a layer that failed to decode (still counted), by kind (frame, dns), since the capture started.
# TYPE netmon_capture_decode_errors_total counter
netmon_capture_decode_errors_total{device="eth0",kind="dns"} 2
netmon_capture_decode_errors_total{device="eth0",kind="frame"} 4
# HELP netmon_capture_packets_total Packets the hub-local capture counted since it started.
# TYPE netmon_capture_packets_total counter
netmon_capture_packets_total{device="eth0"} 17
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "netmon_capture_decode_errors_total", "netmon_capture_packets_total"); err != nil {
		t.Error(err)
	}
}
