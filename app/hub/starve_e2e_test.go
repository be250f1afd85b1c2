package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"netmon/collectors/flows/replay"
	"netmon/store"
	"netmon/store/storetest"
)

// flood is RELIABILITY case 32's run, shared by the test (what must hold
// on any machine) and the benchmark (the latency figures): a UDP flood on
// the syslog and the flow port at once, at fixed rates, while an operator
// logs in and creates API tokens every 100 ms.
type flood struct {
	// dsn is the hub's -db: a SQLite file or a PostgreSQL DSN.
	dsn        string
	syslogRate int // syslog datagrams per second
	flowRate   int // NetFlow v5 datagrams per second (softflowd's, up to 30 records each)
	seconds    int
}

// floodResult is what a flood run saw.
type floodResult struct {
	base   string
	hub    *process
	dbPath string
	// lat holds each answered request's latency by kind (login, token).
	lat   map[string][]time.Duration
	fails []string
	// Datagrams sent on each port and the time the senders ran.
	syslogSent, flowSent, flowRecords int64
	elapsed                           time.Duration
}

func (f flood) run(tb testing.TB) floodResult {
	dir := tb.TempDir()
	syslogPort, flowPort := freeUDPPort(tb), freeUDPPort(tb)
	dsn := f.dsn
	if dsn == "" {
		dsn = filepath.Join(dir, "netmon.db")
	}
	base, hub, _ := startLimitedHubIn(tb, dir, 0, "-syslog-port", strconv.Itoa(syslogPort), "-flow-port", strconv.Itoa(flowPort), "-db", dsn)
	res := floodResult{base: base, hub: hub, dbPath: dsn, lat: map[string][]time.Duration{}}
	datagrams, err := replay.Load(filepath.Join("..", "..", "testdata", "flows", "netflow", "softflowd-v5.pcap"))
	if err != nil {
		tb.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(f.seconds)*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var syslogSent atomic.Int64
	start := time.Now()
	wg.Add(2)
	go func() {
		defer wg.Done()
		c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", syslogPort))
		if err != nil {
			tb.Error(err)
			return
		}
		defer c.Close()
		for i := 0; ctx.Err() == nil; i++ {
			line := "<134>Nov 24 10:00:00 flood app[1]: flood message " + strconv.Itoa(i)
			if _, err := c.Write([]byte(line)); err == nil {
				syslogSent.Add(1)
			}
			if i%200 == 199 {
				if wait := time.Until(start.Add(time.Duration(i+1) * time.Second / time.Duration(f.syslogRate))); wait > 0 {
					time.Sleep(wait)
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", flowPort))
		if err != nil {
			tb.Error(err)
			return
		}
		defer c.Close()
		// Retimed: the flows land in the current minutes, as from a live
		// exporter (the recording's own times are months old).
		r, err := replay.SendRetimed(ctx, c, datagrams, f.flowRate, f.flowRate*f.seconds)
		if err != nil {
			tb.Error(err)
		}
		res.flowSent, res.flowRecords = int64(r.Datagrams), int64(r.Flows)
	}()

	token := loginBinary(tb, base)
	var mu sync.Mutex
	client := &http.Client{Timeout: 10 * time.Second}
	timeReq := func(what string, req *http.Request, want int) {
		t0 := time.Now()
		resp, err := client.Do(req)
		took := time.Since(t0)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.fails = append(res.fails, fmt.Sprintf("%s: %v after %v", what, err, took))
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			res.fails = append(res.fails, fmt.Sprintf("%s: status %d, want %d: %s", what, resp.StatusCode, want, body))
			return
		}
		res.lat[what] = append(res.lat[what], took)
	}
	time.Sleep(time.Second) // the flood is under way
	for i := 0; ctx.Err() == nil; i++ {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/login", strings.NewReader(`{"password":"slow-clients-pw"}`))
		req.Header.Set("Content-Type", "application/json")
		timeReq("login", req, 200)
		req, _ = http.NewRequest(http.MethodPost, base+"/api/v1/tokens", strings.NewReader(fmt.Sprintf(`{"name":"flood-%d","role":"viewer"}`, i)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		timeReq("token", req, 200)
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.syslogSent = syslogSent.Load()
	return res
}

// percentiles returns p50, p99 and the maximum of ds (sorted in place).
func percentiles(ds []time.Duration) (p50, p99, maxd time.Duration) {
	slices.Sort(ds)
	return ds[len(ds)/2], ds[(len(ds)*99)/100], ds[len(ds)-1]
}

// TestIngestFloodDoesNotStarvePeople is RELIABILITY cases 32 and 7, on
// SQLite and on PostgreSQL: a UDP flood
// on the syslog port (40 000 datagrams/s) and the flow port (2 000 NetFlow
// v5 datagrams/s, about 60 000 flow records/s) for 10 s while an operator
// logs in and creates API tokens every 100 ms. What must hold on any
// machine: the flood reached at least half its rate on both ports, every
// login and token creation was answered (200) within a generous 2 s, none
// was starved, conservation is exact on both ports afterwards, and no
// record the hub accepted was dropped by a failed write (store_error):
// what the store cannot take is shed at the edge, counted. The
// latency target (p99 under 300 ms) is a figure of the benchmark
// BenchmarkIngestFloodOperatorLatency (make bench-flood), not an assertion
// here: a loaded machine must not fail make test.
func TestIngestFloodDoesNotStarvePeople(t *testing.T) {
	if testing.Short() {
		t.Skip("floods the hub binary")
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) { floodTest(t, dsn) })
}

func floodTest(t *testing.T, dsn string) {
	f := flood{dsn: dsn, syslogRate: 40_000, flowRate: 2_000, seconds: 10}
	res := f.run(t)
	secs := res.elapsed.Seconds()
	t.Logf("flood: %d syslog datagrams (%.0f/s), %d flow datagrams (%.0f/s, %d records) in %.1f s",
		res.syslogSent, float64(res.syslogSent)/secs, res.flowSent, float64(res.flowSent)/secs, res.flowRecords, secs)
	if got := float64(res.syslogSent) / secs; got < float64(f.syslogRate)/2 {
		t.Errorf("syslog flood reached %.0f datagrams/s, less than half its %d/s: the test did not flood", got, f.syslogRate)
	}
	if got := float64(res.flowSent) / secs; got < float64(f.flowRate)/2 {
		t.Errorf("flow flood reached %.0f datagrams/s, less than half its %d/s: the test did not flood", got, f.flowRate)
	}
	if len(res.fails) > 0 {
		t.Errorf("%d interactive writes failed, first: %s", len(res.fails), res.fails[0])
	}
	for _, what := range []string{"login", "token"} {
		ds := res.lat[what]
		if len(ds) < 10 {
			t.Errorf("only %d %s requests answered in the flood: starved", len(ds), what)
			continue
		}
		p50, p99, maxd := percentiles(ds)
		t.Logf("%s under the flood: %d requests, p50 %v, p99 %v, max %v", what, len(ds), p50, p99, maxd)
		if maxd > 2*time.Second {
			t.Errorf("%s took %v under the flood, over the 2 s any operator write must answer in", what, maxd)
		}
	}
	res.checkConservation(t)
}

// checkConservation waits until the ingest queue has written or dropped
// everything, stops the hub (which writes the open flow minutes) and
// checks, for both ports: sent = received + kernel drops, and received =
// stored + rejected + dropped with a reason.
func (res floodResult) checkConservation(t *testing.T) {
	t.Helper()
	base := res.base
	waitFor(t, 180*time.Second, "the ingest queue to drain", func() bool {
		return metricSum(t, base, "netmon_ingest_pending_records", "") == 0
	}, func() string { return "" })
	received := metricSum(t, base, "netmon_syslog_received_total", "")
	kernel := metricSum(t, base, "netmon_syslog_kernel_drops_total", "")
	rejected := metricSum(t, base, "netmon_syslog_rejected_total", "")
	refused := metricSum(t, base, "netmon_syslog_dropped_total", "")
	dropped := metricSum(t, base, "netmon_ingest_dropped_total", `kind="syslog"`)
	storeErrors := metricSum(t, base, "netmon_ingest_dropped_total", `reason="store_error"`)
	written := metricSum(t, base, "netmon_ingest_records_total", `kind="syslog",result="written"`)

	flowDecoded := metricSum(t, base, "netmon_flow_datagrams_decoded_total", "")
	flowRejected := metricSum(t, base, "netmon_flow_datagrams_rejected_total", "")
	flowKernel := metricSum(t, base, "netmon_flow_kernel_drops_total", "")
	recDecoded := metricSum(t, base, "netmon_flow_records_decoded_total", "")
	recQueued := metricSum(t, base, "netmon_flow_records_queued_total", "")
	recRefused := metricSum(t, base, "netmon_flow_records_dropped_total", "")
	recDropped := metricSum(t, base, "netmon_ingest_dropped_total", `kind="flow"`)
	res.hub.stop(t)

	n := res.syslogSent
	t.Logf("syslog: sent %d; received %v, kernel drops %v; rejected %v, refused by the queue %v, dropped by the queue %v, written %v",
		n, received, kernel, rejected, refused, dropped, written)
	t.Logf("flows: sent %d datagrams (%d records); decoded %v, rejected %v, kernel drops %v; records decoded %v, queued %v, refused %v, dropped %v",
		res.flowSent, res.flowRecords, flowDecoded, flowRejected, flowKernel, recDecoded, recQueued, recRefused, recDropped)
	if float64(n) != received+kernel {
		t.Errorf("syslog: sent %d != received %v + kernel drops %v", n, received, kernel)
	}
	if storeErrors != 0 {
		t.Errorf("%v records accepted by the hub were dropped by failed writes (store_error): shed at the edge instead", storeErrors)
	}
	if float64(res.flowSent) != flowDecoded+flowRejected+flowKernel {
		t.Errorf("flows: sent %d datagrams != decoded %v + rejected %v + kernel drops %v", res.flowSent, flowDecoded, flowRejected, flowKernel)
	}
	if recDecoded != recQueued+recRefused {
		t.Errorf("flows: records decoded %v != queued %v + refused by the full queue %v", recDecoded, recQueued, recRefused)
	}
	db, err := store.Open(context.Background(), discardLog(), store.Config{DSN: res.dbPath, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stored, storedFlows int64
	if err := db.Reader().QueryRow(`SELECT COUNT(*) FROM syslog_events`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if err := db.Reader().QueryRow(`SELECT COALESCE(SUM(flows),0) FROM flow_minutes`).Scan(&storedFlows); err != nil {
		t.Fatal(err)
	}
	if float64(stored) != written {
		t.Errorf("syslog: stored rows %d != written %v", stored, written)
	}
	if float64(stored)+rejected+refused+dropped != received {
		t.Errorf("syslog: stored %d + rejected %v + refused %v + dropped %v != received %v", stored, rejected, refused, dropped, received)
	}
	if float64(storedFlows) != recQueued-recDropped {
		t.Errorf("flows: stored flow records %d != queued %v - dropped %v", storedFlows, recQueued, recDropped)
	}
}

// BenchmarkIngestFloodOperatorLatency is the figure behind RELIABILITY case
// 32: the latency of logins and token creations during the flood of
// TestIngestFloodDoesNotStarvePeople. The target is a p99 under 300 ms;
// run it on a quiet machine (make bench-flood) and quote it with the
// load average.
func BenchmarkIngestFloodOperatorLatency(b *testing.B) {
	for range b.N {
		res := flood{dsn: os.Getenv("NETMON_BENCH_FLOOD_DSN"), syslogRate: 40_000, flowRate: 2_000, seconds: 10}.run(b)
		if len(res.fails) > 0 {
			b.Errorf("%d interactive writes failed, first: %s", len(res.fails), res.fails[0])
		}
		for _, what := range []string{"login", "token"} {
			if len(res.lat[what]) == 0 {
				b.Fatalf("no %s answered", what)
			}
			p50, p99, maxd := percentiles(res.lat[what])
			b.ReportMetric(float64(p50.Microseconds())/1000, what+"-p50-ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, what+"-p99-ms")
			b.ReportMetric(float64(maxd.Microseconds())/1000, what+"-max-ms")
		}
		b.ReportMetric(float64(res.syslogSent)/res.elapsed.Seconds(), "syslog-datagrams/s")
		b.ReportMetric(float64(res.flowRecords)/res.elapsed.Seconds(), "flow-records/s")
		res.hub.stop(b)
	}
}

// metricSum adds up the samples of a metric whose labels contain filter.
func metricSum(t testing.TB, base, name, filter string) float64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+loginBinary(t, base))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var sum float64
	for _, line := range strings.Split(string(raw), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		labels, value, _ := strings.Cut(rest, " ")
		if !strings.Contains(labels, filter) {
			continue
		}
		v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
		sum += v
	}
	return sum
}

// loginBinary logs in with the legacy password and returns the token.
func loginBinary(t testing.TB, base string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/login", "application/json", strings.NewReader(`{"password":"slow-clients-pw"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lr struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&lr); err != nil || lr.Token == "" {
		t.Fatalf("login: %v %d", err, resp.StatusCode)
	}
	return lr.Token
}
