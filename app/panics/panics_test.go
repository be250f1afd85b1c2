package panics

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestDoRecoversAndCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := New(reg, nil, "fwrest")
	if err := g.Do(func() {}); err != nil {
		t.Fatalf("a normal return gave %v", err)
	}
	err := g.Do(func() {
		var s []int
		_ = s[0]
	})
	var pe *Error
	if !errors.As(err, &pe) || pe.Component != "fwrest" || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("err = %v", err)
	}
	// A second guard of the same component shares the series.
	g2 := New(reg, nil, "fwrest")
	_ = g2.Do(func() { panic("again") })
	want := `
# HELP netmon_panics_total Panics recovered in background work (a device poll, a loop iteration), by component; each one became that item's error instead of a crash.
# TYPE netmon_panics_total counter
netmon_panics_total{component="fwrest"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), MetricName); err != nil {
		t.Error(err)
	}
	// Another component is its own series of the same metric.
	_ = New(reg, nil, "snmp").Do(func() { panic(1) })
	if n := testutil.CollectAndCount(reg, MetricName); n != 2 {
		t.Errorf("%d series, want 2", n)
	}
	var nilGuard *Guard
	if err := nilGuard.Do(func() { panic("x") }); err == nil {
		t.Error("a nil guard did not recover")
	}
}

// TestKeepRestartsTheLoop: a loop that panics runs again; Keep returns
// when the loop returns normally, or when stop closes.
func TestKeepRestartsTheLoop(t *testing.T) {
	g := New(nil, nil, "loop")
	g.pause = time.Millisecond
	var runs atomic.Int32
	g.Keep(nil, func() {
		if runs.Add(1) < 3 {
			panic("boom")
		}
	})
	if runs.Load() != 3 || g.Count() != 2 {
		t.Errorf("runs %d, panics %v; want 3 and 2", runs.Load(), g.Count())
	}
	stop := make(chan struct{})
	close(stop)
	g.Keep(stop, func() { panic("always") })
	if g.Count() != 3 {
		t.Errorf("panics %v, want 3", g.Count())
	}
}
