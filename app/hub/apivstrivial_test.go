package hub

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"
)

const trivialServerEnv = "NETMON_TRIVIAL_SERVER_ADDR"

// TestTrivialServerProcess is the baseline of BenchmarkAPIVsTrivial: a
// plain net/http handler answering a small JSON object, run as a process
// of its own like the hub. It does nothing unless started by the
// benchmark.
func TestTrivialServerProcess(t *testing.T) {
	addr := os.Getenv(trivialServerEnv)
	if addr == "" {
		t.Skip("the benchmark's baseline process")
	}
	body := map[string]any{"running": false, "device": "", "error": "", "total_packets": 0, "total_bytes": 0}
	_ = http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
}

// BenchmarkAPIVsTrivial is issue 28 item 15b's figure: GET /api/status of
// the built hub binary (no session needed with authentication off; the
// capture stopped) against a trivial net/http JSON handler in a process
// of its own, loaded the same way, interleaved twice in one run. The
// goal is a ratio of at least 0.7. Run with make bench-http.
func BenchmarkAPIVsTrivial(b *testing.B) {
	if *measureBinary == "" {
		b.Skip("needs -measure-binary (make bench-http)")
	}
	dir := b.TempDir()
	port := freePort(b)
	hub := exec.Command(*measureBinary, "hub", "-port", strconv.Itoa(port), "-db", filepath.Join(dir, "netmon.db"),
		"-log-level", "warn", "-capture=false", "-ip-online-lookup=false", "-host-conns=false", "-geoip-dir", filepath.Join(dir, "geoip"))
	hub.Dir = dir // its vault key and files stay in the benchmark's directory
	if err := hub.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = hub.Process.Kill(); _ = hub.Wait() }()
	tport := freePort(b)
	trivial := exec.Command(os.Args[0], "-test.run", "^TestTrivialServerProcess$")
	trivial.Env = append(os.Environ(), trivialServerEnv+"="+net.JoinHostPort("127.0.0.1", strconv.Itoa(tport)))
	if err := trivial.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = trivial.Process.Kill(); _ = trivial.Wait() }()
	hubURL := fmt.Sprintf("http://127.0.0.1:%d/api/status", port)
	trivialURL := fmt.Sprintf("http://127.0.0.1:%d/", tport)
	for _, u := range []string{hubURL, trivialURL} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s not ready", u)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	d := time.Duration(*measureSeconds) * time.Second
	var hubN, trivN int
	var hubLat, trivLat []float64
	for range 2 {
		n, lat := load(hubURL, *measureConns, d)
		hubN, hubLat = hubN+n, append(hubLat, lat...)
		n, lat = load(trivialURL, *measureConns, d)
		trivN, trivLat = trivN+n, append(trivLat, lat...)
	}
	sort.Float64s(hubLat)
	sort.Float64s(trivLat)
	secs := 2 * d.Seconds()
	b.ReportMetric(float64(hubN)/secs, "status_req/s")
	b.ReportMetric(pct(hubLat, 0.99), "status_p99_ms")
	b.ReportMetric(float64(trivN)/secs, "trivial_req/s")
	b.ReportMetric(pct(trivLat, 0.99), "trivial_p99_ms")
	b.ReportMetric(float64(hubN)/float64(trivN), "ratio")
	b.Logf("/api/status %.0f req/s (p99 %.2f ms) vs a trivial net/http JSON handler %.0f req/s (p99 %.2f ms): %.2fx (goal 0.7x)",
		float64(hubN)/secs, pct(hubLat, 0.99), float64(trivN)/secs, pct(trivLat, 0.99), float64(hubN)/float64(trivN))
}
