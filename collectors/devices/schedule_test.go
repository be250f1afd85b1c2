package devices

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store"
	"netmon/store/record"
)

// memStore is the component's Store over slices: the store itself is
// tested in store/ and app/hub.
type memStore struct {
	mu    sync.Mutex
	devs  []store.Device
	polls []record.DevicePoll
}

func (m *memStore) Devices(context.Context, string) ([]store.Device, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.devs), nil
}

func (m *memStore) Device(_ context.Context, id int64) (store.Device, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range m.devs {
		if d.ID == id {
			return d, nil
		}
	}
	return store.Device{}, store.ErrNotFound
}

func (m *memStore) DeviceIfaces(context.Context, int64, int64) ([]record.IfaceSample, error) {
	return nil, nil
}

func (m *memStore) DeviceIfaceHistory(context.Context, int64, int64, int64) ([]store.IfaceRate, error) {
	return nil, nil
}

func (m *memStore) DeviceResources(context.Context, int64, int64) ([]record.ResourceSample, error) {
	return nil, nil
}

func (m *memStore) DeviceVPN(context.Context, int64, int64) ([]record.VPNSample, error) {
	return nil, nil
}

func (m *memStore) DeviceSDWAN(context.Context, int64, int64) ([]record.SDWANSample, error) {
	return nil, nil
}

func (m *memStore) DevicePolicies(context.Context, int64, int64) ([]record.PolicyDelta, error) {
	return nil, nil
}

func (m *memStore) SaveDevicePoll(_ context.Context, p record.DevicePoll) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.polls = append(m.polls, p)
	return nil
}

func (m *memStore) InTx(context.Context, func(*store.Tx) error) error {
	return errors.New("memStore has no transactions")
}

func (m *memStore) pollsOf(id int64) []record.DevicePoll {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []record.DevicePoll
	for _, p := range m.polls {
		if p.DeviceID == id {
			out = append(out, p)
		}
	}
	return out
}

// fakeDriver polls devices whose vendor is its name; poll decides each
// poll's outcome.
type fakeDriver struct {
	name   string
	limits Limits
	poll   func(d record.Device) (record.DevicePoll, error)

	mu             sync.Mutex
	opened, closed int
}

func (f *fakeDriver) Name() string                 { return f.name }
func (f *fakeDriver) Handles(d record.Device) bool { return d.Vendor == f.name }
func (f *fakeDriver) Limits() Limits               { return f.limits }
func (f *fakeDriver) Probe(context.Context, record.Device) ProbeReport {
	return ProbeReport{OK: true, SysName: f.name}
}

func (f *fakeDriver) Open() Session {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opened++
	return fakeSession{f}
}

func (f *fakeDriver) counts() (opened, closed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opened, f.closed
}

type fakeSession struct{ f *fakeDriver }

func (s fakeSession) Poll(_ context.Context, d record.Device) (record.DevicePoll, error) {
	return s.f.poll(d)
}

func (s fakeSession) Close() {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.closed++
}

var errDown = errors.New("down")

// newTest builds a component over ms and drivers with a fixed clock and
// its device list read (as a running poller's would be).
func newTest(t *testing.T, cfg Config, ms *memStore, reg prometheus.Registerer, drivers ...Driver) (*Component, *time.Time) {
	t.Helper()
	c := New(nil, cfg, Deps{Store: ms, Registerer: reg, Drivers: drivers})
	clock := time.Unix(1764000000, 0)
	c.now = func() time.Time { return clock }
	if err := c.refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c, &clock
}

// TestScheduleBackoff: a failing device waits its interval doubled per
// failure, up to its driver's cap (else the component's); a driver's
// MinInterval raises poll_seconds; the first poll falls inside the first
// interval; a success resets the failures and keeps the phase.
func TestScheduleBackoff(t *testing.T) {
	failing := true
	poll := func(d record.Device) (record.DevicePoll, error) {
		if failing {
			return record.DevicePoll{TS: 1, Err: "down"}, errDown
		}
		return record.DevicePoll{TS: 1, SysName: "up"}, nil
	}
	a := &fakeDriver{name: "a", poll: poll}
	b := &fakeDriver{name: "b", limits: Limits{MinInterval: time.Minute, MaxBackoff: 5 * time.Minute}, poll: poll}
	ms := &memStore{devs: []store.Device{
		{ID: 1, Vendor: "a", PollSeconds: 20, Enabled: true},
		{ID: 2, Vendor: "b", PollSeconds: 10, Enabled: true},
	}}
	cfg := DefaultConfig()
	cfg.MaxBackoff = 3 * time.Minute
	c, clock := newTest(t, cfg, ms, nil, a, b)
	t0 := *clock
	for id, iv := range map[int64]time.Duration{1: 20 * time.Second, 2: time.Minute} {
		st, ok := c.DeviceState(id)
		if !ok || st.Next.Before(t0) || !st.Next.Before(t0.Add(iv)) {
			t.Errorf("device %d first due at %v; want within [t0, t0+%v)", id, st.Next.Sub(t0), iv)
		}
	}
	for id, want := range map[int64][]time.Duration{
		1: {20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 3 * time.Minute, 3 * time.Minute},
		2: {time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute},
	} {
		for i, w := range want {
			if !c.PollDevice(context.Background(), id) {
				t.Fatalf("device %d not polled", id)
			}
			if st, _ := c.DeviceState(id); st.Failures != i+1 || st.Next.Sub(t0) != w {
				t.Errorf("device %d after %d failures: next in %v (failures %d), want %v", id, i+1, st.Next.Sub(t0), st.Failures, w)
			}
		}
	}
	failing = false
	c.PollDevice(context.Background(), 1)
	if st, _ := c.DeviceState(1); st.Failures != 0 || st.Next.Sub(t0) != 3*time.Minute+20*time.Second {
		t.Errorf("after a success: failures %d, next in %v; want 0, the due time (3m) plus 20s", st.Failures, st.Next.Sub(t0))
	}
	if polls := ms.pollsOf(1); len(polls) != 7 || polls[0].Err != "down" || polls[6].Err != "" || polls[6].DeviceID != 1 {
		t.Errorf("polls of device 1: %+v", polls)
	}
}

// TestPollPanicIsTheDevicesError (RELIABILITY case 33): a panic inside a
// device's poll is that device's recorded error and a count in
// netmon_panics_total under its driver's name; the session is closed and
// the next poll opens a new one and succeeds.
func TestPollPanicIsTheDevicesError(t *testing.T) {
	panics := true
	x := &fakeDriver{name: "x", poll: func(record.Device) (record.DevicePoll, error) {
		if panics {
			panics = false
			panic("injected")
		}
		return record.DevicePoll{TS: 1}, nil
	}}
	ms := &memStore{devs: []store.Device{{ID: 7, Vendor: "x", PollSeconds: 60, Enabled: true}}}
	reg := prometheus.NewRegistry()
	c, _ := newTest(t, DefaultConfig(), ms, reg, x)
	c.PollDevice(context.Background(), 7)
	polls := ms.pollsOf(7)
	if len(polls) != 1 || polls[0].Err != "internal error in x (recovered panic: injected); counted in netmon_panics_total" {
		t.Fatalf("recorded %+v", polls)
	}
	if st, _ := c.DeviceState(7); st.Failures != 1 {
		t.Errorf("failures %d after the panic", st.Failures)
	}
	if o, cl := x.counts(); o != 1 || cl != 1 {
		t.Errorf("sessions opened %d closed %d; want the panicked one closed", o, cl)
	}
	c.PollDevice(context.Background(), 7)
	if polls := ms.pollsOf(7); len(polls) != 2 || polls[1].Err != "" {
		t.Errorf("next poll %+v", polls)
	}
	if o, _ := x.counts(); o != 2 {
		t.Errorf("sessions opened %d; want a new one", o)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP netmon_device_polls_total Device polls by driver and result (ok, error).
# TYPE netmon_device_polls_total counter
netmon_device_polls_total{driver="x",result="error"} 1
netmon_device_polls_total{driver="x",result="ok"} 1
# HELP netmon_panics_total Panics recovered in background work (a device poll, a loop iteration), by component; each one became that item's error instead of a crash.
# TYPE netmon_panics_total counter
netmon_panics_total{component="devices"} 0
netmon_panics_total{component="x"} 1
`), "netmon_panics_total", "netmon_device_polls_total"); err != nil {
		t.Error(err)
	}
}

// TestRefreshSelects: enabled devices some driver handles are scheduled,
// counted per driver; a device that goes has its session closed; one
// that changes driver starts anew under the other.
func TestRefreshSelects(t *testing.T) {
	ok := func(record.Device) (record.DevicePoll, error) { return record.DevicePoll{}, nil }
	a, b := &fakeDriver{name: "a", poll: ok}, &fakeDriver{name: "b", poll: ok}
	ms := &memStore{devs: []store.Device{
		{ID: 1, Vendor: "a", Enabled: true},
		{ID: 2, Vendor: "a", Enabled: false},
		{ID: 3, Vendor: "nobody", Enabled: true},
		{ID: 4, Vendor: "b", Enabled: true},
	}}
	reg := prometheus.NewRegistry()
	c, _ := newTest(t, DefaultConfig(), ms, reg, a, b)
	gauge := func(driver string) float64 { return testutil.ToFloat64(c.m.devices.WithLabelValues(driver)) }
	var ids []int64
	for _, id := range []int64{1, 2, 3, 4} {
		if _, ok := c.DeviceState(id); ok {
			ids = append(ids, id)
		}
	}
	if !slices.Equal(ids, []int64{1, 4}) || gauge("a") != 1 || gauge("b") != 1 {
		t.Errorf("scheduled %v, gauges a %v b %v; want [1 4], 1 and 1", ids, gauge("a"), gauge("b"))
	}
	c.PollDevice(context.Background(), 1)
	ms.mu.Lock()
	ms.devs = []store.Device{{ID: 4, Vendor: "a", Enabled: true}}
	ms.mu.Unlock()
	if err := c.refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, cl := a.counts(); cl != 1 {
		t.Errorf("device 1's session closed %d times after it went; want 1", cl)
	}
	if st, ok := c.DeviceState(4); !ok || st.Driver != "a" || gauge("a") != 1 || gauge("b") != 0 {
		t.Errorf("device 4 now %+v (%v); gauges a %v b %v", st, ok, gauge("a"), gauge("b"))
	}
}

// TestPollsOnlyOnLeader (issue 33): a replica that does not lead polls no
// device, whatever is due; once it leads, the due devices are polled.
func TestPollsOnlyOnLeader(t *testing.T) {
	var n atomic.Int32
	d := &fakeDriver{name: "a", poll: func(record.Device) (record.DevicePoll, error) {
		n.Add(1)
		return record.DevicePoll{TS: 1}, nil
	}}
	ms := &memStore{devs: []store.Device{{ID: 1, Vendor: "a", PollSeconds: 10, Enabled: true}}}
	var leads atomic.Bool
	cfg := DefaultConfig()
	c := New(nil, cfg, Deps{Store: ms, Drivers: []Driver{d}, IsLeader: leads.Load})
	clock := time.Unix(1764000000, 0)
	var mu sync.Mutex
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) { // the schedule has read the device
		if _, ok := c.DeviceState(1); ok || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	clock = clock.Add(time.Minute) // the device is due
	mu.Unlock()
	time.Sleep(400 * time.Millisecond)
	if got := n.Load(); got != 0 {
		t.Fatalf("%d polls while not leading, want 0", got)
	}
	leads.Store(true)
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n.Load() != 1 {
		t.Errorf("%d polls once leading, want 1", n.Load())
	}
}
