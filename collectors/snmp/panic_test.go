package snmp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store/record"
)

// TestPollPanicIsTheDevicesError (RELIABILITY case 33): a panic inside
// one device's poll becomes that device's recorded error and a count in
// netmon_panics_total{component="snmp"}; the device is not left
// "running" (it is polled again) and the worker is not lost.
func TestPollPanicIsTheDevicesError(t *testing.T) {
	ms := &memStore{devs: []record.Device{{ID: 7, Host: "192.0.2.1", SNMPVersion: "2c", Community: "public", Enabled: true}}}
	reg := prometheus.NewRegistry()
	p := New(nil, testConfig(), Deps{Targets: ms, Writer: ms, Registerer: reg})
	if err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := p.devices[7]
	st.running = true
	// The second clock reading of pollDevice is the poll's own start:
	// the injected panic is inside the poll.
	calls := 0
	p.now = func() time.Time {
		if calls++; calls == 2 {
			panic("injected")
		}
		return time.Unix(1764000000, 0)
	}
	p.pollDevice(context.Background(), st)
	polls := ms.pollsOf(7)
	if len(polls) != 1 || polls[0].Err != "internal error in snmp (recovered panic: injected); counted in netmon_panics_total" {
		t.Fatalf("recorded %+v", polls)
	}
	if st.running || !st.reset || st.failures != 1 {
		t.Errorf("after the panic: running %v, reset %v, failures %d", st.running, st.reset, st.failures)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP netmon_panics_total Panics recovered in background work (a device poll, a loop iteration), by component; each one became that item's error instead of a crash.
# TYPE netmon_panics_total counter
netmon_panics_total{component="snmp"} 1
`), "netmon_panics_total"); err != nil {
		t.Error(err)
	}
}
