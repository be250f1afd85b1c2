package hub

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

var (
	measureBinary  = flag.String("measure-binary", "", "built netmon binary for BenchmarkHubBinary (make bench-http sets it)")
	measureSeconds = flag.Int("measure-seconds", 10, "length of the /healthz load in BenchmarkHubBinary")
	measureConns   = flag.Int("measure-conns", 64, "concurrent keep-alive connections of the /healthz load")
)

// BenchmarkHubBinary measures the built binary as a user runs it: cold start
// (exec to the first /readyz 200 on a fresh SQLite file), idle RSS, and
// /healthz throughput and latency percentiles under a closed-loop load of
// keep-alive connections on loopback. Run it once: make bench-http.
func BenchmarkHubBinary(b *testing.B) {
	if *measureBinary == "" {
		b.Skip("needs -measure-binary (make bench-http)")
	}
	dir := b.TempDir()
	port := freePort(b)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	for range b.N {
		start := time.Now()
		cmd := exec.Command(*measureBinary, "hub", "-port", strconv.Itoa(port), "-db", filepath.Join(dir, "netmon.db"), "-log-level", "warn")
		cmd.Stderr = os.Stderr
		cmd.Dir = dir // its vault key stays in the benchmark's directory, not in app/hub
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		client := &http.Client{Timeout: time.Second}
		for {
			resp, err := client.Get(base + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
			}
			if time.Since(start) > 30*time.Second {
				_ = cmd.Process.Kill()
				b.Fatal("hub not ready after 30 s")
			}
			time.Sleep(2 * time.Millisecond)
		}
		coldStart := time.Since(start)
		time.Sleep(2 * time.Second)
		idleRSS := rssMB(b, cmd.Process.Pid)

		reqs, lat := load(base+"/healthz", *measureConns, time.Duration(*measureSeconds)*time.Second)
		loadRSS := rssMB(b, cmd.Process.Pid)

		// /api/status with the capture running on lo (the load itself is
		// the captured traffic) and four WebSocket clients attached.
		if resp, err := client.Post(base+"/api/capture/start", "application/json", strings.NewReader(`{"device":"lo"}`)); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			b.Logf("capture start on lo: %s", body)
		}
		stopWS := attachWS(b, strings.Replace(base, "http", "ws", 1)+"/ws", 4)
		sreqs, slat := load(base+"/api/status", *measureConns, time.Duration(*measureSeconds)*time.Second)
		ticks := stopWS()
		srps := float64(sreqs) / float64(*measureSeconds)
		b.ReportMetric(srps, "status_req/s")
		b.ReportMetric(pct(slat, 0.99), "status_p99_ms")
		b.Logf("/api/status %.0f req/s (p50 %.2f ms, p99 %.2f ms) with 4 WebSocket clients (%d ticks received)", srps, pct(slat, 0.5), pct(slat, 0.99), ticks)

		stopAt := time.Now()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			b.Errorf("hub exit after SIGTERM: %v", err)
		}
		shutdown := time.Since(stopAt)

		rps := float64(reqs) / float64(*measureSeconds)
		b.ReportMetric(float64(coldStart.Microseconds())/1000, "coldstart_ms")
		b.ReportMetric(idleRSS, "idle_rss_MB")
		b.ReportMetric(loadRSS, "load_rss_MB")
		b.ReportMetric(rps, "healthz_req/s")
		b.ReportMetric(pct(lat, 0.50), "p50_ms")
		b.ReportMetric(pct(lat, 0.99), "p99_ms")
		b.ReportMetric(float64(shutdown.Milliseconds()), "shutdown_ms")
		b.Logf("cold start %v, idle RSS %.1f MB, /healthz %.0f req/s over %d conns (p50 %.2f ms, p99 %.2f ms), RSS under load %.1f MB, SIGTERM to exit %v",
			coldStart.Round(time.Millisecond), idleRSS, rps, *measureConns, pct(lat, 0.5), pct(lat, 0.99), loadRSS, shutdown.Round(time.Millisecond))
	}
}

// load runs conns closed-loop clients against url for d and returns the
// number of completed requests and every latency in milliseconds.
func load(url string, conns int, d time.Duration) (int, []float64) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	var all []float64
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]float64, 0, 1<<16)
			for ctx.Err() == nil {
				t0 := time.Now()
				resp, err := client.Get(url)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
				}
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Float64s(all)
	return len(all), all
}

func pct(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(float64(len(sorted)-1)*p)]
}

// attachWS connects n WebSocket clients that read ticks until the returned
// function is called; it returns how many ticks they received.
func attachWS(b *testing.B, url string, n int) func() int64 {
	ctx, cancel := context.WithCancel(context.Background())
	var got atomic.Int64
	var wg sync.WaitGroup
	for range n {
		c, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			b.Fatalf("websocket: %v", err)
		}
		c.SetReadLimit(8 << 20)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.CloseNow()
			for {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
				got.Add(1)
			}
		}()
	}
	return func() int64 { cancel(); wg.Wait(); return got.Load() }
}

// rssMB reads VmRSS of pid from /proc (Linux).
func rssMB(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return 0
}
