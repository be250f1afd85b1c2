package snmp

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"netmon/collectors/snmp/snmptest"
	"netmon/store/record"
)

var (
	scaleDevices = flag.Int("snmp-devices", 1000, "BenchmarkPollerScale: simulated devices (48 interfaces each)")
	scaleSims    = flag.Int("snmp-sims", 2, "BenchmarkPollerScale: snmpsimd processes sharing the devices (one Python process answers 9 000-13 000 values/s, less than 1 000 devices' first whole walks need)")
	scaleSeconds = flag.Int("snmp-seconds", 75, "BenchmarkPollerScale: run length; the interval is 60 s, so every device is due once in the first 60 s")
	rateSeconds  = flag.Int("snmp-rate-seconds", 5, "BenchmarkPollerVsSnmpd: seconds of each measurement")
	freshSession = flag.Bool("snmp-fresh-sessions", false, "BenchmarkPollerVsSnmpd: a new session per poll (the poller before sessions were kept), for comparison")
)

// countingWriter counts polls per device and keeps when each started
// and when it was saved (finished).
type countingWriter struct {
	mu     sync.Mutex
	polls  map[int64][]int64
	done   map[int64][]time.Time
	errors map[string]int
}

func (w *countingWriter) SaveDevicePoll(_ context.Context, p record.DevicePoll) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls[p.DeviceID] = append(w.polls[p.DeviceID], p.TS)
	w.done[p.DeviceID] = append(w.done[p.DeviceID], time.Now())
	if p.Err != "" {
		w.errors[p.Err]++
	}
	return nil
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
	w := &countingWriter{polls: map[int64][]int64{}, done: map[int64][]time.Time{}, errors: map[string]int{}}
	cfg := DefaultConfig()
	cfg.TopologyEvery = time.Hour // the scale run polls interfaces; topology tables are not in the fixtures
	cfg.Timeout, cfg.Retries = 5*time.Second, 1
	p := New(nil, cfg, Deps{Targets: &memStore{devs: devs}, Writer: w})
	b.ResetTimer()
	for range b.N {
		cpu0, simCPU0, t0 := cpuSeconds(), simCPU(), time.Now()
		req0, vb0 := readCounter(p.m.requests), readCounter(p.m.varbinds)
		if err := p.Start(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Duration(*scaleSeconds) * time.Second)
		_ = p.Stop()
		wall := time.Since(t0).Seconds()
		cpu, simUsed := cpuSeconds()-cpu0, simCPU()-simCPU0
		req, vb := readCounter(p.m.requests)-req0, readCounter(p.m.varbinds)-vb0
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
			due := t0.Add(p.phase(devs[id]))
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
		b.ReportMetric(readCounter(p.m.late), "late-polls")
		b.Logf("%d devices x 48 interfaces, 60 s interval, %.0f s: %d/%d devices' first polls started within the first 60 s, %d within the last (runs of 120 s or more), %d polls, "+
			"%d finished after their next poll was due (longest from due to finished: %.1f s), errors %s; "+
			"poller %.1f%% of a core, %d snmpsimd %.1f%% of a core together; %.0f requests/s, %.0f varbinds/s; late polls %v",
			n, wall, inFirst, n, inLast, total, overdue, maxLag.Seconds(), errs, 100*cpu/wall, nsim, 100*simUsed/wall, req/wall, vb/wall, readCounter(p.m.late))
	}
}

// BenchmarkPollerVsSnmpd: the poller's request rate against a real
// snmpd next to snmpd's own answering rate, v2c and v3 authPriv, taken
// back to back under the same load and the same concurrency (16):
//
//   - snmpd's rate: 16 raw gosnmp workers sending one-varbind GETs of
//     sysUpTime, each on one kept session: the cheapest request there is.
//   - the poller's: 16 workers each polling a device through the
//     production path (pollRaw with the device's kept session and
//     interface cache: a whole walk, then moving columns).
//
// The machine's 2 cores are shared, so neither side may get a whole core;
// next to the rates each side's CPU is measured (snmpd's from /proc, the
// poller's from getrusage) and normalised per CPU-second: snmpd's
// answering capacity (one-value GETs per snmpd CPU-second), and for the
// poller's own requests (GETBULKs of about twenty values) the requests
// the poller sends per poller CPU-second against those snmpd answers per
// snmpd CPU-second. same-request-ratio ≥ 1: given a core each, snmpd,
// not the poller, is the bottleneck. rate-ratio is the raw quotient of
// the two rates, which the shared cores make noisy.
func BenchmarkPollerVsSnmpd(b *testing.B) {
	agent := snmptest.Start(b)
	d := time.Duration(*rateSeconds) * time.Second
	for _, dev := range []record.Device{
		{Host: agent.Addr, SNMPVersion: "2c", Community: "public"},
		{Host: agent.Addr, SNMPVersion: "3", V3User: "u1", V3AuthProto: "SHA", V3AuthPass: snmptest.AuthPass, V3PrivProto: "AES", V3PrivPass: snmptest.PrivPass},
	} {
		name := "v" + dev.SNMPVersion
		b.Run(name, func(b *testing.B) {
			for range b.N {
				raw := rawGetRate(b, dev, d, agent.Pid())
				p := New(nil, testConfig(), Deps{})
				rec := recordCycle(b, p, dev)
				replay := replayRate(b, dev.Host, rec, 16, d)
				var reqs, vbs, polls atomic.Int64
				var wg sync.WaitGroup
				deadline := time.Now().Add(d)
				cpu0, snmpd0, t0 := cpuSeconds(), procCPUSeconds(agent.Pid()), time.Now()
				for range 16 {
					wg.Go(func() {
						var sess devSession
						var cache ifCache
						defer sess.close()
						for time.Now().Before(deadline) {
							keep := &sess
							if *freshSession {
								keep = nil
							}
							r, err := p.pollRaw(context.Background(), dev, false, &cache, keep)
							if err != nil {
								b.Error(err)
								return
							}
							reqs.Add(int64(r.requests))
							vbs.Add(int64(r.varbinds))
							polls.Add(1)
						}
					})
				}
				wg.Wait()
				wall := time.Since(t0).Seconds()
				cpu, snmpdCPU := cpuSeconds()-cpu0, procCPUSeconds(agent.Pid())-snmpd0
				rate := float64(reqs.Load()) / wall
				capacity := float64(reqs.Load()) / cpu
				snmpdPerReq := float64(reqs.Load()) / snmpdCPU
				b.ReportMetric(raw.rate, "snmpd-GET/s")
				b.ReportMetric(raw.perCPU, "snmpd-GET/snmpd-cpu-s")
				b.ReportMetric(rate, "poller-requests/s")
				b.ReportMetric(capacity, "poller-requests/cpu-s")
				b.ReportMetric(float64(polls.Load())/cpu, "poller-polls/cpu-s")
				b.ReportMetric(rate/raw.rate, "rate-ratio")
				b.ReportMetric(capacity/snmpdPerReq, "same-request-ratio")
				b.ReportMetric(replay, "snmpd-replayed-requests/s")
				b.ReportMetric(rate/replay, "poller/replay")
				b.Logf("%s: snmpd answered %.0f one-value GETs/s at %.0f%% of a core (%.0f%% for the raw client): %.0f GETs per snmpd CPU-second. "+
					"The poller: %.0f requests/s (%.0f polls/s, %.0f values/s) at %.0f%% of a core, snmpd then at %.0f%%: %.0f of these requests per snmpd CPU-second, "+
					"%.0f per poller CPU-second (%.0f polls). Rate %.2fx snmpd's GETs/s; per CPU-second on the same requests the poller sends %.2fx what snmpd answers. "+
					"The poller's own requests replayed raw (%d per cycle of %d polls): snmpd answered %.0f/s; the poller's rate is %.2fx that",
					name, raw.rate, 100*raw.snmpdCore, 100*raw.clientCore, raw.perCPU,
					rate, float64(polls.Load())/wall, float64(vbs.Load())/wall, 100*cpu/wall, 100*snmpdCPU/wall, snmpdPerReq,
					capacity, float64(polls.Load())/cpu, rate/raw.rate, capacity/snmpdPerReq,
					len(rec.reqs), fullWalkEvery, replay, rate/replay)
			}
		})
	}
}

// rawRate is snmpd's answering rate for one-varbind GETs and the CPU
// both sides used meanwhile (shares of one core).
type rawRate struct {
	rate, perCPU, snmpdCore, clientCore float64
}

// rawGetRate is snmpd's answering rate: 16 workers sending one-varbind
// GETs of sysUpTime for d, each on one kept session.
func rawGetRate(b *testing.B, dev record.Device, d time.Duration, pid int) rawRate {
	var n atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	cpu0, snmpd0, t0 := cpuSeconds(), procCPUSeconds(pid), time.Now()
	for range 16 {
		wg.Go(func() {
			g, err := newSession(context.Background(), dev, testConfig(), nil)
			if err != nil {
				b.Error(err)
				return
			}
			defer g.Close()
			for time.Now().Before(deadline) {
				if _, err := g.Get([]string{oidSysUpTime}); err == nil {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(t0).Seconds()
	snmpd := procCPUSeconds(pid) - snmpd0
	return rawRate{rate: float64(n.Load()) / wall, perCPU: float64(n.Load()) / snmpd, snmpdCore: snmpd / wall, clientCore: (cpuSeconds() - cpu0) / wall}
}
