package flows

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, to read the hub's totals
	_ "modernc.org/sqlite"             // the SQLite driver, likewise

	"netmon/collectors/flows/replay"
	"netmon/store/storetest"
)

var (
	cardinality        = flag.Int("cardinality", 1_000_000, "distinct 5-tuples of BenchmarkCardinality's stream")
	cardinalitySeconds = flag.Int("cardinality-seconds", 60, "length of each BenchmarkCardinality run")
)

// cardinalityExport returns softflowd's NetFlow v9 export of a generated
// capture of n distinct one-packet 5-tuples, made once and kept in the
// temporary directory (about 30 s for a million).
func cardinalityExport(b *testing.B, n int) string {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("netmon-cardinality-%d-v9.pcap", n))
	if fileExists(path) {
		return path
	}
	softflowd := findTool("softflowd")
	if softflowd == "" {
		if os.Getenv("CI") == "true" {
			b.Fatal("softflowd must be installed in CI")
		}
		b.Skip("needs softflowd")
	}
	dir := b.TempDir()
	in := filepath.Join(dir, "in.pcap")
	if _, err := replay.GeneratePcap(in, replay.GenConfig{Tuples: n, PacketsPer: 1, Start: time.Now(), Minutes: 1, Payload: 32}); err != nil {
		b.Fatal(err)
	}
	ds, out, err := replay.Softflowd(softflowd, in, "9", dir)
	if err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	flows := 0
	for _, d := range ds {
		flows += d.Flows
	}
	if flows < n*99/100 {
		b.Fatalf("recorded %d flows of softflowd's export of %d 5-tuples", flows, n)
	}
	tmp := path + ".tmp"
	if err := replay.WriteExport(tmp, ds, 2055); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkCardinality is issue 16's measurement: softflowd's export of a
// million distinct 5-tuples, replayed by flowreplay (a separate process,
// export times set to now, so the million 5-tuples recur every few
// seconds within the current minute) into the netmon hub binary for 60 s,
// on SQLite at 200 000 flows/s and PostgreSQL at 500 000 (when
// NETMON_TEST_PG_DSN is set). It reports loss (flows the hub did not
// decode), catch-up (from the end of the replay until the hub, stopped,
// has written every open minute and exited), the hub's CPU per flow from
// start to exit (all-in), its peak RSS, and the p99 of the flows and
// conversations endpoints queried while it ingests, and the freshness of
// their answers (from a probe flow's send until it is listed, issue 28;
// freshness_bench_test.go); then it checks that the database holds
// exactly the flows decoded (the probes' included).
func BenchmarkCardinality(b *testing.B) {
	netmon, replayBin := buildBinaries(b)
	pcap := cardinalityExport(b, *cardinality)
	ds, err := replay.Load(pcap)
	if err != nil {
		b.Fatal(err)
	}
	per := flowsIn(b, ds)
	total := 0
	for _, n := range per {
		total += n
	}
	perDgram := float64(total) / float64(len(ds))
	for _, run := range []struct {
		db   string
		rate int // flows/s
	}{{"sqlite", 200_000}, {"postgres", 500_000}} {
		b.Run(fmt.Sprintf("%s/flows=%d", run.db, run.rate), func(b *testing.B) {
			dsn := filepath.Join(b.TempDir(), "netmon.db")
			if run.db == "postgres" {
				// Skips on a laptop without PostgreSQL, fails under CI=true.
				dsn = storetest.PostgresDSN(b)
			}
			for range b.N {
				runCardinality(b, netmon, replayBin, pcap, dsn, run.db, per, int(float64(run.rate)/perDgram))
			}
		})
	}
}

func runCardinality(b *testing.B, netmon, replayBin, pcap, dsn, dialect string, per []int, dgramRate int) {
	p, base := startNetmonDB(b, netmon, dsn)
	seconds := *cardinalitySeconds
	count := dgramRate * seconds
	cpu0 := p.cpu()
	// The API while ingesting: the three queries in turn, 4 a second.
	stopQ := make(chan struct{})
	var lat []time.Duration
	var qerr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		paths := []string{"/api/v1/flows?minutes=15", "/api/v1/flows/conversations?window=1h", "/api/v1/flows/conversations?window=24h"}
		for i := 0; ; i++ {
			select {
			case <-stopQ:
				return
			case <-time.After(250 * time.Millisecond):
			}
			t0 := time.Now()
			resp, err := http.Get(base + paths[i%len(paths)])
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("%s: %s", paths[i%len(paths)], resp.Status)
				}
			}
			if err != nil {
				qerr = err
				return
			}
			lat = append(lat, time.Since(t0))
		}
	}()
	// The freshness probe (freshness_bench_test.go), beside the replay.
	stopF := make(chan struct{})
	var fresh []time.Duration
	var missed int
	wg.Add(1)
	go func() {
		defer wg.Done()
		fresh, missed = freshness(b, base, p.addr, stopF)
	}()
	out, err := exec.Command(replayBin, "-pcap", pcap, "-to", p.addr, "-rate", strconv.Itoa(dgramRate), "-count", strconv.Itoa(count), "-retime").CombinedOutput()
	if err != nil {
		b.Fatalf("flowreplay: %v\n%s", err, out)
	}
	end := time.Now()
	close(stopQ)
	close(stopF)
	wg.Wait()
	if qerr != nil {
		b.Fatalf("API while ingesting: %v", qerr)
	}
	offered := offeredFlows(b, out, per)
	time.Sleep(200 * time.Millisecond) // the socket's backlog
	decoded := metric(b, base+"/metrics", "netmon_flow_records_decoded_total")
	dropped := metric(b, base+"/metrics", "netmon_ingest_dropped_total")
	keys := metric(b, base+"/metrics", "netmon_flow_aggregation_keys ")
	kernel := metric(b, base+"/metrics", "netmon_flow_kernel_drops_total")
	rss := peakRSS(p.cmd.Process.Pid)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
	catchup := time.Since(end)
	// All-in: everything the hub spent after its start, its final writes
	// included.
	cpu := p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime() - cpu0
	// Stored = decoded, read from the database the hub left.
	driver := "sqlite"
	if dialect == "postgres" {
		driver = "pgx"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var stored int64
	if err := db.QueryRowContext(context.Background(), `SELECT COALESCE(SUM(flows), 0) FROM flow_minutes`).Scan(&stored); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(offered)/float64(seconds), "flows/s")
	b.ReportMetric(decoded/float64(seconds), "ingest-flows/s")
	reportFreshness(b, fresh, missed)
	b.ReportMetric(100*(float64(offered)-decoded)/float64(offered), "loss%")
	b.ReportMetric(dropped, "dropped")
	b.ReportMetric(kernel, "kernel-drops")
	b.ReportMetric(float64(decoded)-float64(stored), "unstored")
	b.ReportMetric(catchup.Seconds(), "catchup-s")
	b.ReportMetric(float64(cpu.Nanoseconds())/max(decoded, 1), "cpu-ns/flow")
	b.ReportMetric(rss/1024, "peak-rss-MB")
	b.ReportMetric(keys, "keys-at-end")
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "api-p99-ms")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "api-p50-ms")
	}
	if int64(decoded) != stored {
		b.Errorf("decoded %v flows, stored %d", decoded, stored)
	}
}

// startNetmonDB starts the hub binary on dsn and returns it with its base
// URL.
func startNetmonDB(b *testing.B, bin, dsn string) (*peerProc, string) {
	dir := b.TempDir()
	port, udp := freePortB(b, "tcp"), freePortB(b, "udp")
	cmd := exec.Command(bin, "hub", "-port", strconv.Itoa(port), "-flow-port", strconv.Itoa(udp), "-capture=false", "-ip-online-lookup=false",
		"-db", dsn, "-vault-key-file", filepath.Join(dir, "vault.key"), "-geoip-dir", dir, "-record-dir", dir, "-log-level", "warn")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(b, base+"/readyz")
	p := &peerProc{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", udp)}
	return p, base
}

// peakRSS is VmHWM of pid in KiB.
func peakRSS(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for l := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return n
		}
	}
	return 0
}

// buildBinaries builds the hub and flowreplay for the benchmarks that run
// them as separate processes.
func buildBinaries(b *testing.B) (netmon, flowreplay string) {
	dir := b.TempDir()
	netmon, flowreplay = filepath.Join(dir, "netmon"), filepath.Join(dir, "flowreplay")
	for bin, pkg := range map[string]string{netmon: "netmon", flowreplay: "netmon/collectors/flows/replay/cmd/flowreplay"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			b.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	return netmon, flowreplay
}

// offeredFlows reads how many datagrams flowreplay said it sent and adds
// up the flows they carried (per: flows of each recorded datagram).
func offeredFlows(b *testing.B, out []byte, per []int) int64 {
	m := sentRE.FindSubmatch(out)
	if m == nil {
		b.Fatalf("flowreplay said:\n%s", out)
	}
	sent, _ := strconv.Atoi(string(m[1]))
	var offered int64
	for i := range sent {
		offered += int64(per[i%len(per)])
	}
	return offered
}
