package ebpf

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// BenchmarkKernelCostPerCall measures what the programs cost the kernel
// per call: with the kernel's BPF statistics on (the switch of sysctl
// kernel.bpf_stats_enabled=1), one connected UDP send on loopback per
// iteration, paced at 100 000 sends/s, each read by a receiver; the
// programs' run_time_ns/run_cnt over the run are reported as
// send-ns/call and recv-ns/call. The counts include every other
// socket call on the host during the run (the machine is shared), and
// the statistics' own cost: an empty tp_btf program measures 55-75 ns
// per call on the project's 2-core VMs.
//
// sockets=1 sends on one socket, as a bulk transfer does (the per-CPU
// cache hits); sockets=64 sends on 64 sockets in turn, more than the
// cache's 8 ways, so most calls miss it and take the socket storage
// path: the cost of chatty hosts with many conversations at once.
func BenchmarkKernelCostPerCall(b *testing.B) {
	for _, n := range []int{1, 64, 1024} {
		b.Run(fmt.Sprintf("sockets=%d", n), func(b *testing.B) { kernelCost(b, n) })
	}
}

func kernelCost(b *testing.B, sockets int) {
	a := start(b)
	stats, err := EnableStats()
	if err != nil {
		b.Fatal(err)
	}
	defer stats.Close()
	srv, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := srv.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	conns := make([]net.Conn, sockets)
	for i := range conns {
		c, err := net.Dial("udp4", srv.LocalAddr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	before, err := a.Stats()
	if err != nil {
		b.Fatal(err)
	}
	msg := make([]byte, 100)
	rate := 100_000
	// NETMON_BENCH_UNPACED=1 sends as fast as it can instead.
	if os.Getenv("NETMON_BENCH_UNPACED") != "" {
		rate = 1 << 40
	}
	begin := time.Now()
	i := 0
	for b.Loop() {
		_, _ = conns[i%sockets].Write(msg) // a full receive buffer may refuse one; the program ran
		i++
		if i%100 == 0 {
			if ahead := time.Duration(i)*time.Second/time.Duration(rate) - time.Since(begin); ahead > 0 {
				time.Sleep(ahead)
			}
		}
	}
	elapsed := time.Since(begin)
	after, err := a.Stats()
	if err != nil {
		b.Fatal(err)
	}
	for i, s := range after {
		runs := s.RunCount - before[i].RunCount
		if runs == 0 && s.Name == "task_exit" {
			continue // no task exited on the host during the run
		}
		if runs == 0 {
			b.Fatalf("%s never ran", s.Name)
		}
		b.ReportMetric(float64(s.RunTime-before[i].RunTime)/float64(runs), s.Name+"-ns/call")
	}
	b.ReportMetric(float64(i)/elapsed.Seconds(), "sends/s")
}
