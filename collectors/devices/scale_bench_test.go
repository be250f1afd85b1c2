package devices

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/collectors/snmp/snmptest"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/vault"
)

var (
	scaleDevices = flag.Int("snmp-devices", 1000, "BenchmarkPollerScale: simulated devices (48 interfaces each)")
	scaleSims    = flag.Int("snmp-sims", 2, "BenchmarkPollerScale: snmpsimd processes sharing the devices (one Python process answers 9 000-13 000 values/s, less than 1 000 devices' first whole walks need)")
	scaleSeconds = flag.Int("snmp-seconds", 75, "BenchmarkPollerScale: run length; the interval is 60 s, so every device is due once in the first 60 s")
)

// countingStore counts polls per device and keeps when each started and
// when it was saved (finished).
type countingStore struct {
	memStore
	mu     sync.Mutex
	polls  map[int64][]int64
	done   map[int64][]time.Time
	errors map[string]int
}

func (w *countingStore) SaveDevicePoll(_ context.Context, p record.DevicePoll) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls[p.DeviceID] = append(w.polls[p.DeviceID], p.TS)
	w.done[p.DeviceID] = append(w.done[p.DeviceID], time.Now())
	if p.Err != "" {
		w.errors[p.Err]++
	}
	return nil
}

// gathered sums a metric's series on reg.
func gathered(b *testing.B, reg *prometheus.Registry, name string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// cpuSeconds is this process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// procCPUSeconds is another process's user+system CPU time (/proc).
func procCPUSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// BenchmarkPollerScale: one poller, -snmp-devices simulated switches of
// 48 interfaces (-snmp-sims snmpsimd processes on loopback sharing them,
// one community per device),
// every device every 60 s, the default 96 workers. Reports whether every
// device was polled inside the first interval, the poller's CPU (share
// of one core), its request and varbind rates, and snmpsimd's CPU.
func BenchmarkPollerScale(b *testing.B) {
	n, nsim := *scaleDevices, max(1, *scaleSims)
	dirs := make([]string, nsim)
	for i := range dirs {
		dirs[i] = b.TempDir()
	}
	start := time.Now()
	for i := range n {
		if err := snmptest.WriteSwitch(filepath.Join(dirs[i%nsim], fmt.Sprintf("dev%04d.snmprec", i)), fmt.Sprintf("sw%04d", i), 48); err != nil {
			b.Fatal(err)
		}
	}
	sims := make([]*snmptest.Sim, nsim)
	for i := range sims {
		sims[i] = snmptest.StartSim(b, dirs[i])
	}
	simCPU := func() float64 {
		var s float64
		for _, sim := range sims {
			s += procCPUSeconds(sim.Pid)
		}
		return s
	}
	b.Logf("%d snmpsimd processes ready with %d devices in %v", nsim, n, time.Since(start).Round(time.Millisecond))
	devs := make([]record.Device, n)
	for i := range devs {
		devs[i] = record.Device{ID: int64(i + 1), Host: sims[i%nsim].Addr, SNMPVersion: "2c", Community: fmt.Sprintf("dev%04d", i), PollSeconds: 60, Enabled: true}
	}
	v, err := vault.New(vault.Key{1})
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]store.Device, n)
	for i, d := range devs {
		blob, err := v.Seal([]byte(`{"community":"`+d.Community+`"}`), AD(d.ID))
		if err != nil {
			b.Fatal(err)
		}
		rows[i] = store.Device{ID: d.ID, Name: fmt.Sprintf("sw%04d", i), Host: d.Host, SNMPVersion: "2c", PollSeconds: 60, Enabled: true, Secrets: blob}
	}
	w := &countingStore{memStore: memStore{devs: rows}, polls: map[int64][]int64{}, done: map[int64][]time.Time{}, errors: map[string]int{}}
	cfg := DefaultConfig()
	cfg.SNMP.TopologyEvery = time.Hour // the scale run polls interfaces; topology tables are not in the fixtures
	cfg.SNMP.Timeout, cfg.SNMP.Retries = 5*time.Second, 1
	reg := prometheus.NewRegistry()
	p := New(nil, cfg, Deps{Store: w, Vault: v, Registerer: reg})
	counter := func(name string) float64 { return gathered(b, reg, name) }
	b.ResetTimer()
	for range b.N {
		cpu0, simCPU0, t0 := cpuSeconds(), simCPU(), time.Now()
		req0, vb0 := counter("netmon_snmp_requests_total"), counter("netmon_snmp_varbinds_total")
		if err := p.Start(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Duration(*scaleSeconds) * time.Second)
		_ = p.Stop()
		wall := time.Since(t0).Seconds()
		cpu, simUsed := cpuSeconds()-cpu0, simCPU()-simCPU0
		req, vb := counter("netmon_snmp_requests_total")-req0, counter("netmon_snmp_varbinds_total")-vb0
		w.mu.Lock()
		inFirst, inLast, total := 0, 0, 0
		end := t0.Unix() + int64(wall)
		// A device's k-th poll is due at t0 + its phase + k intervals and
		// must finish (be saved) before the next is due: lag is how long
		// after its due time a poll finished.
		var maxLag time.Duration
		overdue := 0
		for id := range int64(n) {
			ts := w.polls[id+1]
			total += len(ts)
			if len(ts) > 0 && ts[0]-t0.Unix() < 60 {
				inFirst++
			}
			// Steady state: polled in the run's last interval (whole
			// walks done, moving columns only but every 10th poll).
			if len(ts) > 0 && wall >= 120 && ts[len(ts)-1] >= end-60 {
				inLast++
			}
			due := t0.Add(p.phase(devs[id], p.drivers[0]))
			for k, f := range w.done[id+1] {
				lag := f.Sub(due.Add(time.Duration(k) * time.Minute))
				maxLag = max(maxLag, lag)
				if lag > time.Minute {
					overdue++
				}
			}
		}
		errs := fmt.Sprint(w.errors)
		w.mu.Unlock()
		b.ReportMetric(float64(inFirst), "devices-polled-in-first-60s")
		b.ReportMetric(float64(overdue), "polls-finished-after-next-due")
		b.ReportMetric(maxLag.Seconds(), "max-lag-s")
		if wall >= 120 {
			b.ReportMetric(float64(inLast), "devices-polled-in-last-60s")
		}
		b.ReportMetric(100*cpu/wall, "poller-%core")
		b.ReportMetric(100*simUsed/wall, "snmpsimd-%core")
		b.ReportMetric(req/wall, "requests/s")
		b.ReportMetric(vb/wall, "varbinds/s")
		b.ReportMetric(counter("netmon_device_polls_late_total"), "late-polls")
		b.Logf("%d devices x 48 interfaces, 60 s interval, %.0f s: %d/%d devices' first polls started within the first 60 s, %d within the last (runs of 120 s or more), %d polls, "+
			"%d finished after their next poll was due (longest from due to finished: %.1f s), errors %s; "+
			"poller %.1f%% of a core, %d snmpsimd %.1f%% of a core together; %.0f requests/s, %.0f varbinds/s; late polls %v",
			n, wall, inFirst, n, inLast, total, overdue, maxLag.Seconds(), errs, 100*cpu/wall, nsim, 100*simUsed/wall, req/wall, vb/wall, counter("netmon_device_polls_late_total"))
	}
}
