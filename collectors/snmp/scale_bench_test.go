package snmp

import (
	"context"
	"flag"
	"fmt"
	"os"
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
	rateSeconds  = flag.Int("snmp-rate-seconds", 5, "BenchmarkPollerVsSnmpd: seconds of each measurement")
	freshSession = flag.Bool("snmp-fresh-sessions", false, "BenchmarkPollerVsSnmpd: a new session per poll (the poller before sessions were kept), for comparison")
)

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
				p := New(testConfig(), Deps{})
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
