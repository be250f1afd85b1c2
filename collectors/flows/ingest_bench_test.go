package flows

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"netmon/collectors/flows/netflow"
	"netmon/collectors/flows/replay"
	"netmon/collectors/flows/sflow"
	"netmon/store/queue"
	"netmon/store/record"
	"netmon/store/storetest"
)

// countingSink counts the flows handed to it.
type countingSink struct{ flows atomic.Int64 }

func (s *countingSink) PutFlows(fs []record.Flow) bool       { s.flows.Add(int64(len(fs))); return true }
func (s *countingSink) PutSyslog([]record.SyslogEvent) bool  { return true }
func (s *countingSink) PutTelemetry([]record.Telemetry) bool { return true }

// flowsIn decodes a recording twice (templates first) and returns the
// flows each datagram carries.
func flowsIn(_ testing.TB, ds []replay.Datagram) []int {
	dec := netflow.NewDecoder(netflow.DefaultConfig())
	now := time.Now()
	ex := netip.MustParseAddr("127.0.0.1")
	decode := func(data []byte, out []record.Flow) []record.Flow {
		if Protocol(data) == "sflow5" {
			out, _, _ = sflow.Decode(data, ex, now, out)
			return out
		}
		out, _, _ = dec.Decode(data, ex, now, out)
		return out
	}
	var out []record.Flow
	for _, d := range ds {
		out = decode(d.Data, out[:0])
	}
	per := make([]int, len(ds))
	for i, d := range ds {
		out = decode(d.Data, out[:0])
		per[i] = len(out)
	}
	return per
}

var (
	ingestSeconds     = flag.Int("ingest-seconds", 2, "length of each rate step of BenchmarkIngest (RELIABILITY 7 asks for 60)")
	ingestCardinality = flag.Int("ingest-cardinality", 0, "also replay softflowd's export of this many distinct 5-tuples in BenchmarkIngest (issue 16)")
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIngest replays softflowd's NetFlow v9 and IPFIX exports from a
// separate process (flowreplay) at stepped rates into the collector, with
// a counting sink (decode only) and with the real queue and a SQLite store
// (decode, aggregate, store), and reports flows/s offered, loss and the
// CPU of this process per flow.
func BenchmarkIngest(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "flowreplay")
	if out, err := exec.Command("go", "build", "-o", bin, "netmon/collectors/flows/replay/cmd/flowreplay").CombinedOutput(); err != nil {
		b.Fatalf("build flowreplay: %v\n%s", err, out)
	}
	files := []string{"netflow/softflowd-v9.pcap", "netflow/softflowd-ipfix.pcap", "sflow/sflow.pcap"}
	if *ingestCardinality > 0 {
		files = append(files, cardinalityExport(b, *ingestCardinality))
	}
	for _, file := range files {
		pcap := filepath.Join("..", "..", "testdata", "flows", file)
		if filepath.IsAbs(file) {
			pcap = file
		}
		ds, err := replay.Load(pcap)
		if err != nil {
			b.Fatal(err)
		}
		per := flowsIn(b, ds)
		for _, store := range []bool{false, true} {
			rates := []int{5000, 20000, 50000}
			switch {
			case filepath.Base(file) == "sflow.pcap":
				rates = []int{20000, 50000, 85000} // about 6 samples a datagram: up to ~500 000 samples/s
			case filepath.IsAbs(file):
				rates = []int{6700, 16700} // about 30 flows a datagram: 200 000 and 500 000 flows/s
			}
			for _, rate := range rates {
				name := fmt.Sprintf("%s/store=%v/dgrams=%d", filepath.Base(file), store, rate)
				b.Run(name, func(b *testing.B) {
					for range b.N {
						runIngest(b, bin, pcap, ds, per, rate, store)
					}
				})
			}
		}
	}
}

var sentRE = regexp.MustCompile(`sent (\d+) datagrams`)

func runIngest(b *testing.B, bin, pcap string, ds []replay.Datagram, per []int, rate int, withStore bool) {
	var sink record.Sink
	counting := &countingSink{}
	var q *queue.Channel
	sink = counting
	if withStore {
		db := storetest.OpenSQLite(b)
		q = queue.New(slog.New(slog.DiscardHandler), queue.DefaultConfig(), db, nil)
		_ = q.Start()
		sink = teeSink{q, counting}
	}
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	c := New(slog.New(slog.DiscardHandler), cfg, sink, nil, nil)
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	to := c.Addrs()[0].(*net.UDPAddr).String()
	seconds := *ingestSeconds
	count := rate * seconds
	cpu0 := processCPU()
	out, err := exec.Command(bin, "-pcap", pcap, "-to", to, "-rate", strconv.Itoa(rate), "-count", strconv.Itoa(count), "-retime").CombinedOutput()
	if err != nil {
		b.Fatalf("flowreplay: %v\n%s", err, out)
	}
	offered := offeredFlows(b, out, per)
	time.Sleep(300 * time.Millisecond)
	kernel := c.KernelDrops()
	_ = c.Stop()
	if q != nil {
		_ = q.Stop()
	}
	cpu := processCPU() - cpu0
	got := counting.flows.Load()
	loss := 100 * float64(offered-got) / float64(offered)
	b.ReportMetric(float64(offered)/float64(seconds), "flows/s")
	b.ReportMetric(loss, "loss%")
	b.ReportMetric(kernel, "kernel-drops")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(max(got, 1)), "cpu-ns/flow")
}

// teeSink counts what reaches the queue.
type teeSink struct {
	q *queue.Channel
	c *countingSink
}

func (t teeSink) PutFlows(fs []record.Flow) bool {
	if t.q.PutFlows(fs) {
		t.c.flows.Add(int64(len(fs)))
		return true
	}
	return false
}
func (t teeSink) PutSyslog(es []record.SyslogEvent) bool  { return t.q.PutSyslog(es) }
func (t teeSink) PutTelemetry(ts []record.Telemetry) bool { return t.q.PutTelemetry(ts) }
