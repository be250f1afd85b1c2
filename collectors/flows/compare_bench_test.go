package flows

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"netmon/collectors/flows/netflow"
	"netmon/collectors/flows/replay"
	"netmon/store/record"
)

// BenchmarkCompareCollectors sends the same NetFlow v9 stream (softflowd's
// export, replayed by flowreplay from a separate process) to netmon's hub,
// goflow2 (binary output to /dev/null) and pmacct's nfacctd (print plugin)
// in turn, at stepped rates, and reports each one's loss and CPU per flow
// (from /proc/<pid>/stat). Loss is counted in datagrams for netmon and
// goflow2 (their own counters) and in packets summed over the flows for
// nfacctd (its output). Two streams: the committed low-cardinality
// recording, and softflowd's export of -cardinality distinct 5-tuples
// (issue 16; off with -compare-cardinality=false); both are replayed with
// their export times set to now. Needs goflow2 on PATH or in ~/go/bin
// (`go install github.com/netsampler/goflow2/v2/cmd/goflow2@v2.2.6`) and
// nfacctd (Debian's pmacct); it runs in `make bench`.
func BenchmarkCompareCollectors(b *testing.B) {
	goflow2 := findTool("goflow2")
	nfacctd := findTool("nfacctd")
	if goflow2 == "" || nfacctd == "" {
		b.Skip("needs goflow2 and nfacctd")
	}
	netmon, replayBin := buildBinaries(b)
	lowCard, _ := filepath.Abs("../../testdata/flows/netflow/softflowd-v9.pcap")
	streams := []struct {
		name  string
		pcap  string
		rates []int // datagrams/s
	}{{"v9", lowCard, []int{10000, 46000}}}
	if *compareCardinality {
		// A million distinct 5-tuples at about 200 000 flows/s (softflowd
		// packs about 30 flows a datagram), export times set to now.
		streams = append(streams, struct {
			name  string
			pcap  string
			rates []int
		}{fmt.Sprintf("v9-distinct%d", *cardinality), cardinalityExport(b, *cardinality), []int{6700}})
	}
	for _, st := range streams {
		ds, err := replay.Load(st.pcap)
		if err != nil {
			b.Fatal(err)
		}
		flowsPer, packetsPer := perDatagram(ds)
		for _, rate := range st.rates {
			for _, peer := range []string{"netmon", "goflow2", "nfacctd"} {
				b.Run(fmt.Sprintf("%s/%s/dgrams=%d", st.name, peer, rate), func(b *testing.B) {
					for range b.N {
						comparePeer(b, peer, netmon, goflow2, nfacctd, replayBin, st.pcap, ds, flowsPer, packetsPer, rate)
					}
				})
			}
		}
	}
}

var (
	compareSeconds     = flag.Int("compare-seconds", 3, "length of each BenchmarkCompareCollectors step")
	compareCardinality = flag.Bool("compare-cardinality", true, "add the high-cardinality stream (softflowd's export of -cardinality distinct 5-tuples) to BenchmarkCompareCollectors")
)

func comparePeer(b *testing.B, peer, netmon, goflow2, nfacctd, replayBin, pcap string, ds []replay.Datagram, flowsPer []int, packetsPer []int64, rate int) {
	var p *peerProc
	switch peer {
	case "netmon":
		p = startNetmon(b, netmon)
	case "goflow2":
		p = startGoflow2(b, goflow2)
	default:
		p = startNfacctd(b, nfacctd)
	}
	seconds := *compareSeconds
	count := rate * seconds
	cpu0 := p.cpu()
	out, err := exec.Command(replayBin, "-pcap", pcap, "-to", p.addr, "-rate", strconv.Itoa(rate), "-count", strconv.Itoa(count), "-retime").CombinedOutput()
	if err != nil {
		b.Fatalf("flowreplay: %v\n%s", err, out)
	}
	time.Sleep(time.Second)
	cpu := p.cpu() - cpu0
	var offeredFlows, offeredPackets int64
	for i := range count {
		offeredFlows += int64(flowsPer[i%len(ds)])
		offeredPackets += packetsPer[i%len(ds)]
	}
	got, unit := p.received(b)
	p.stop()
	want := float64(count)
	if unit == "packets" {
		got = p.received2(b)
		want = float64(offeredPackets)
	}
	b.ReportMetric(float64(offeredFlows)/float64(seconds), "flows/s")
	b.ReportMetric(100*(want-got)/want, "loss%")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(offeredFlows), "cpu-ns/flow")
}

// perDatagram decodes the recording (templates first) for the flows and
// packets each datagram carries.
func perDatagram(ds []replay.Datagram) ([]int, []int64) {
	dec := netflow.NewDecoder(netflow.DefaultConfig())
	var out []record.Flow
	ex := netip.MustParseAddr("127.0.0.1")
	for _, d := range ds {
		out, _, _ = dec.Decode(d.Data, ex, time.Now(), out[:0])
	}
	flows, packets := make([]int, len(ds)), make([]int64, len(ds))
	for i, d := range ds {
		out, _, _ = dec.Decode(d.Data, ex, time.Now(), out[:0])
		flows[i] = len(out)
		for _, f := range out {
			packets[i] += int64(f.Packets)
		}
	}
	return flows, packets
}

func findTool(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		if p := filepath.Join(home, "go", "bin", name); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func freePortB(b *testing.B, network string) int {
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// peerProc is one collector process under test.
type peerProc struct {
	cmd       *exec.Cmd
	addr      string
	received  func(b *testing.B) (float64, string)
	received2 func(b *testing.B) float64
	stop      func()
}

// cpu is the process's user+system time from /proc/<pid>/stat.
func (p *peerProc) cpu() time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
}

func metric(b *testing.B, url, prefix string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, prefix) {
			v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			sum += v
		}
	}
	return sum
}

func waitHTTP(b *testing.B, url string) {
	for i := 0; i < 200; i++ {
		if resp, err := http.Get(url); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatalf("%s never answered", url)
}

func startNetmon(b *testing.B, bin string) *peerProc {
	dir := b.TempDir()
	port, udp := freePortB(b, "tcp"), freePortB(b, "udp")
	cmd := exec.Command(bin, "hub", "-port", strconv.Itoa(port), "-flow-port", strconv.Itoa(udp), "-capture=false", "-ip-online-lookup=false",
		"-db", filepath.Join(dir, "netmon.db"), "-vault-key-file", filepath.Join(dir, "vault.key"), "-geoip-dir", dir, "-record-dir", dir, "-log-level", "warn")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(b, base+"/readyz")
	return &peerProc{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", udp),
		received: func(b *testing.B) (float64, string) {
			return metric(b, base+"/metrics", "netmon_flow_datagrams_decoded_total") + metric(b, base+"/metrics", "netmon_flow_datagrams_rejected_total"), "datagrams"
		},
		stop: func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }}
}

func startGoflow2(b *testing.B, bin string) *peerProc {
	port, udp := freePortB(b, "tcp"), freePortB(b, "udp")
	cmd := exec.Command(bin, "-listen", fmt.Sprintf("netflow://127.0.0.1:%d", udp), "-format", "bin", "-transport.file", "/dev/null", "-addr", fmt.Sprintf("127.0.0.1:%d", port))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	waitHTTP(b, url)
	return &peerProc{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", udp),
		received: func(b *testing.B) (float64, string) {
			return metric(b, url, "goflow2_flow_traffic_packets_total"), "datagrams"
		},
		stop: func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }}
}

// startNfacctd runs nfacctd aggregating everything by protocol into a CSV
// written when it stops (SIGINT: PEERS.md says SIGTERM does not stop it).
func startNfacctd(b *testing.B, bin string) *peerProc {
	dir := b.TempDir()
	udp := freePortB(b, "udp")
	out := filepath.Join(dir, "out.csv")
	conf := filepath.Join(dir, "nfacctd.conf")
	body := fmt.Sprintf("daemonize: false\nnfacctd_ip: 127.0.0.1\nnfacctd_port: %d\nplugins: print[p]\naggregate[p]: proto\nprint_output[p]: csv\nprint_output_file[p]: %s\nprint_refresh_time[p]: 3600\nnfacctd_pipe_size: 104857600\n", udp, out)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "-f", conf)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	time.Sleep(time.Second)
	p := &peerProc{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", udp)}
	p.received = func(*testing.B) (float64, string) { return 0, "packets" }
	p.stop = func() {}
	p.received2 = func(b *testing.B) float64 {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
		raw, err := os.ReadFile(out)
		if err != nil {
			b.Fatalf("nfacctd output: %v", err)
		}
		var sum float64
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		if len(lines) < 2 {
			return 0
		}
		head := strings.Split(lines[0], ",")
		col := -1
		for i, h := range head {
			if strings.EqualFold(h, "PACKETS") {
				col = i
			}
		}
		for _, l := range lines[1:] {
			f := strings.Split(l, ",")
			if col >= 0 && col < len(f) {
				v, _ := strconv.ParseFloat(f[col], 64)
				sum += v
			}
		}
		return sum
	}
	return p
}
