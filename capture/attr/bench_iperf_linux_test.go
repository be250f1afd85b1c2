package attr

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"netmon/agentmode/wire"
)

// BenchmarkAttributionIperf runs each Linux backend (ebpf alone, ebpf
// with pcap on lo beside it for the names, pcap on lo) in a child process that collects every second like the agent,
// while iperf3 moves -b 1G over loopback for iperfSeconds, and reports:
// the child's CPU (percent of one core) and peak RSS, the share of the
// bytes it saw that it tied to a process, and what it counted for the
// iperf3 processes against what iperf3 says it moved (client sent plus
// server received: both ends are on this host). Run by `make
// bench-attr`, as root; the host is shared, so other traffic is counted
// too.
func BenchmarkAttributionIperf(b *testing.B) {
	needPeers(b, "iperf3")
	// ebpf alone (bytes per process), ebpf with the pcap beside it for
	// the names (what auto runs), pcap alone.
	for _, method := range []string{MethodEBPF, MethodEBPF + "+names", MethodPcap} {
		b.Run(method, func(b *testing.B) {
			for b.Loop() {
				iperfRun(b, method)
			}
		})
	}
}

const iperfSeconds = 5

const benchHelperEnv = "NETMON_ATTR_BENCH_HELPER"

// benchTotals is what the helper saw over its whole run.
type benchTotals struct {
	Attributed, Unattributed, Iperf uint64
	Reasons                         map[string]uint64
}

// TestBenchHelperProcess is the backend side of
// BenchmarkAttributionIperf: it does nothing unless started by it.
func TestBenchHelperProcess(t *testing.T) {
	method := os.Getenv(benchHelperEnv)
	if method == "" {
		return
	}
	cfg := Config{Method: method, PcapInterface: "lo", NoNames: true}
	if m, ok := strings.CutSuffix(method, "+names"); ok {
		cfg.Method, cfg.NoNames = m, false
	}
	b, st := Open(slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
	if b == nil {
		fmt.Printf("error %s\n", st.Note)
		return
	}
	fmt.Printf("ready %s\n", st.Method)
	tot := benchTotals{Reasons: map[string]uint64{}}
	add := func(r Report) {
		for _, p := range r.Processes {
			n := p.BytesIn + p.BytesOut
			switch {
			case p.Process == wire.UnattributedProcess:
				tot.Unattributed += n
				for _, why := range p.Reasons {
					tot.Reasons[why.Reason] += why.Bytes
				}
			default:
				tot.Attributed += n
				if p.Process == "iperf3" {
					tot.Iperf += n
				}
			}
		}
	}
	stop := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stop) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-tick.C:
		case <-stop:
			done = true
		}
		add(b.Collect())
	}
	_ = b.Stop()
	raw, _ := json.Marshal(tot)
	fmt.Printf("%s\n", raw)
}

func iperfRun(b *testing.B, method string) {
	dir := b.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestBenchHelperProcess$", "-test.bench=^$")
	helper.Env = append(os.Environ(), benchHelperEnv+"="+method)
	in, _ := helper.StdinPipe()
	outR, _ := helper.StdoutPipe()
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
	out := bufio.NewReader(outR)
	line, err := out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready "+strings.TrimSuffix(method, "+names")) {
		b.Fatalf("backend %s did not start: %q %v", method, line, err)
	}
	port := strconv.Itoa(15300 + os.Getpid()%500)
	daemon(b, filepath.Join(dir, "iperfS.log"), "iperf3", "-s", "-B", "127.0.0.1", "-p", port, "-1")
	cpu0 := cpuTicks(b, helper.Process.Pid)
	var res struct {
		End struct {
			SumSent     struct{ Bytes uint64 } `json:"sum_sent"`
			SumReceived struct{ Bytes uint64 } `json:"sum_received"`
		} `json:"end"`
	}
	var t0 time.Time
	for try := 0; ; try++ { // the server may need a moment to listen
		t0 = time.Now()
		raw, err := exec.Command("iperf3", "-c", "127.0.0.1", "-p", port, "-t", strconv.Itoa(iperfSeconds), "-b", "1G", "--json").Output()
		if err == nil && json.Unmarshal(raw, &res) == nil && res.End.SumSent.Bytes > 0 {
			break
		}
		if try == 20 {
			b.Fatalf("iperf3: %v %s", err, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(t0)
	cpu := float64(cpuTicks(b, helper.Process.Pid)-cpu0) / 100 / elapsed.Seconds() * 100 // USER_HZ 100
	rss := peakRSS(b, helper.Process.Pid)
	_ = in.Close()
	line, err = out.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	var tot benchTotals
	if err := json.Unmarshal([]byte(line), &tot); err != nil {
		b.Fatalf("%v: %q", err, line)
	}
	truth := res.End.SumSent.Bytes + res.End.SumReceived.Bytes
	b.ReportMetric(cpu, "cpu-%core")
	b.ReportMetric(float64(rss)/(1<<20), "rss-MB")
	b.ReportMetric(100*float64(tot.Attributed)/float64(max(1, tot.Attributed+tot.Unattributed)), "attributed-%")
	b.ReportMetric(100*float64(tot.Iperf)/float64(max(1, truth)), "iperf3-counted-%")
	b.ReportMetric(float64(res.End.SumSent.Bytes)*8/elapsed.Seconds()/1e9, "Gbit/s")
	b.Logf("%s: iperf3 says %d sent + %d received; counted for iperf3 %d; attributed %d, unattributed %d %v",
		method, res.End.SumSent.Bytes, res.End.SumReceived.Bytes, tot.Iperf, tot.Attributed, tot.Unattributed, tot.Reasons)
}

// cpuTicks is a process's user+system time in clock ticks.
func cpuTicks(b *testing.B, pid int) uint64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	u, _ := strconv.ParseUint(f[11], 10, 64)
	s, _ := strconv.ParseUint(f[12], 10, 64)
	return u + s
}

// peakRSS is a process's VmHWM in bytes.
func peakRSS(b *testing.B, pid int) uint64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
