package hub

import (
	"bytes"
	"context"
	"encoding/json"
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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/storetest"
)

var (
	fleetAgents  = flag.Int("fleet-agents", 2000, "simulated agents of BenchmarkFleet")
	fleetSeconds = flag.Int("fleet-seconds", 60, "how long BenchmarkFleet sends telemetry")
	fleetDB      = flag.String("fleet-db", "sqlite", "database of BenchmarkFleet: sqlite or postgres")
	fleetWorkers = flag.Int("fleet-workers", 256, "concurrent senders (keep-alive connections) of BenchmarkFleet")
	// A shorter interval gives the same batch rate with fewer agents to
	// enroll first: for profiling, not for the figures of record.
	fleetInterval = flag.Duration("fleet-interval", 30*time.Second, "telemetry interval of BenchmarkFleet's agents")
)

// BenchmarkFleet runs the built hub as its own process and simulates
// -fleet-agents agents over real HTTP: each enrolls with a hello, then
// sends a batch of 2 interfaces and 50 connections every 30 s, the agents
// spread evenly over the interval. Latency is measured from when a batch
// was due (so a hub that falls behind shows it), and after a graceful stop
// the stored samples are counted against the acknowledged batches.
//
//	make bench-fleet FLEET_AGENTS=50000 FLEET_DB=sqlite
func BenchmarkFleet(b *testing.B) {
	if *measureBinary == "" {
		b.Skip("needs -measure-binary (make bench-fleet)")
	}
	dir := b.TempDir()
	dsn := filepath.Join(dir, "netmon.db")
	if *fleetDB == "postgres" {
		dsn = storetest.PostgresDSN(b)
	}
	port := freePort(b)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for range b.N {
		cmd := exec.Command(*measureBinary, "hub", "-port", strconv.Itoa(port), "-db", dsn, "-log-level", "warn",
			"-enroll-token", testStaticToken, "-auth-password", "admin-password-1", "-capture=false", "-geoip-dir", filepath.Join(dir, "geoip"),
			"-record-dir", filepath.Join(dir, "captures"))
		cmd.Env = append(os.Environ(), "NETMON_VAULT_KEY_FILE="+filepath.Join(dir, "vault.key"))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		waitReady(b, base)
		tr := &http.Transport{MaxIdleConnsPerHost: *fleetWorkers, MaxConnsPerHost: *fleetWorkers, DisableCompression: true}
		client := &http.Client{Transport: tr, Timeout: 60 * time.Second}

		// Enroll.
		start := time.Now()
		tokens := make([]string, *fleetAgents)
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)) - 1; i < len(tokens); i = int(next.Add(1)) - 1 {
					body, _ := json.Marshal(wire.Hello{Name: fmt.Sprintf("sim-%d", i), MachineID: fmt.Sprintf("sim-%d", i), ProtocolVersion: 1, OS: "linux", Arch: "amd64", Version: "bench"})
					req, _ := http.NewRequest("POST", base+wire.PathHello, bytes.NewReader(body))
					req.Header.Set(wire.HeaderEnrollToken, testStaticToken)
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					var hr wire.HelloResponse
					if resp.StatusCode != 200 || json.Unmarshal(raw, &hr) != nil {
						b.Errorf("hello %d: %d %s", i, resp.StatusCode, raw)
						return
					}
					tokens[i] = hr.AgentToken
				}
			}()
		}
		wg.Wait()
		enrollTime := time.Since(start)
		b.Logf("enrolled %d agents in %v (%.0f hellos/s)", len(tokens), enrollTime.Round(time.Millisecond), float64(len(tokens))/enrollTime.Seconds())

		// Telemetry.
		conns := make([]wire.Connection, 50)
		for i := range conns {
			conns[i] = wire.Connection{Proto: "tcp", LocalAddr: fmt.Sprintf("10.1.2.3:%d", 40000+i), RemoteAddr: fmt.Sprintf("198.51.100.%d:443", i),
				Status: "ESTABLISHED", PID: int32(1000 + i), Process: "firefox-esr"}
		}
		connJSON, _ := json.Marshal(conns)
		interval := *fleetInterval
		total := time.Duration(*fleetSeconds) * time.Second
		type job struct {
			agent int
			seq   uint64
			due   time.Time
		}
		jobs := make(chan job, 1<<16)
		var sent, acked, failed atomic.Int64
		var statusMu sync.Mutex
		statuses := map[string]int{}
		lat := make([][]float64, *fleetWorkers)
		cpu0, pg0, gen0 := procCPU(b, cmd.Process.Pid), commCPU("postgres"), selfCPU()
		t0 := time.Now()
		var workers sync.WaitGroup
		for w := range *fleetWorkers {
			workers.Add(1)
			go func() {
				defer workers.Done()
				var buf bytes.Buffer
				for j := range jobs {
					buf.Reset()
					n := uint64(j.seq) * 1_000_000
					fmt.Fprintf(&buf, `{"ts":%d,"seq":%d,"interfaces":[{"name":"eth0","rx_bytes":%d,"tx_bytes":%d,"rx_packets":%d,"tx_packets":%d},{"name":"lo","rx_bytes":%d,"tx_bytes":%d,"rx_packets":%d,"tx_packets":%d}],"connections":%s,"attr_method":"off"}`,
						j.due.Unix(), j.seq, n, n/2, n/1000, n/2000, n/10, n/10, n/100, n/100, connJSON)
					req, _ := http.NewRequest("POST", base+wire.PathTelemetry, bytes.NewReader(buf.Bytes()))
					req.Header.Set("Authorization", "Bearer "+tokens[j.agent])
					req.Header.Set("Content-Type", "application/json")
					sent.Add(1)
					resp, err := client.Do(req)
					if err != nil {
						failed.Add(1)
						statusMu.Lock()
						statuses["transport error"]++
						statusMu.Unlock()
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 200 {
						acked.Add(1)
					} else {
						failed.Add(1)
						statusMu.Lock()
						statuses[strconv.Itoa(resp.StatusCode)]++
						statusMu.Unlock()
					}
					lat[w] = append(lat[w], float64(time.Since(j.due).Microseconds())/1000)
				}
			}()
		}
		// Each agent's batches are due at its phase plus whole intervals.
		n := len(tokens)
		for round := uint64(1); ; round++ {
			roundStart := t0.Add(time.Duration(round-1) * interval)
			if roundStart.Sub(t0) >= total {
				break
			}
			for i := range n {
				due := roundStart.Add(time.Duration(int64(interval) * int64(i) / int64(n)))
				if due.Sub(t0) >= total {
					break
				}
				if d := time.Until(due); d > time.Millisecond {
					time.Sleep(d)
				}
				jobs <- job{agent: i, seq: round, due: due}
			}
		}
		close(jobs)
		workers.Wait()
		elapsed := time.Since(t0)
		cpu := procCPU(b, cmd.Process.Pid) - cpu0
		pgCPU, genCPU := commCPU("postgres")-pg0, selfCPU()-gen0
		rss := rssMB(b, cmd.Process.Pid)

		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			b.Errorf("hub exit: %v", err)
		}
		db, err := store.Open(context.Background(), discardLog(), store.Config{DSN: dsn, MaxConns: 2})
		if err != nil {
			b.Fatal(err)
		}
		var stored int64
		if err := db.Reader().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM agent_samples`).Scan(&stored); err != nil {
			b.Fatal(err)
		}
		db.Close()

		all := slices.Concat(lat...)
		slices.Sort(all)
		rate := float64(acked.Load()) / elapsed.Seconds()
		b.ReportMetric(float64(n), "agents")
		b.ReportMetric(rate, "batches/s")
		b.ReportMetric(pct(all, 0.5), "p50_ms")
		b.ReportMetric(pct(all, 0.99), "p99_ms")
		b.ReportMetric(float64(sent.Load()-stored), "lost")
		b.ReportMetric(cpu/elapsed.Seconds()*100, "hub_cpu_%")
		b.ReportMetric(rss, "hub_rss_MB")
		if *fleetDB == "postgres" {
			b.ReportMetric(pgCPU/elapsed.Seconds()*100, "pg_cpu_%")
		}
		b.ReportMetric(genCPU/elapsed.Seconds()*100, "agents_cpu_%")
		b.Logf("%s: %d agents, %d batches sent, %d acknowledged, %d refused or failed, %d stored; %.0f batches/s (%.0f connection rows/s); p50 %.1f ms, p99 %.1f ms, max %.1f ms; hub CPU %.0f%% of one core, RSS %.0f MB",
			*fleetDB, n, sent.Load(), acked.Load(), failed.Load(), stored, rate, rate*50, pct(all, 0.5), pct(all, 0.99), pct(all, 1), cpu/elapsed.Seconds()*100, rss)
		if len(statuses) > 0 {
			b.Logf("refused or failed by status: %v", statuses)
		}
		if stored != acked.Load() {
			b.Errorf("%d batches acknowledged but %d stored", acked.Load(), stored)
		}
	}
}

func waitReady(b *testing.B, base string) {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := c.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("hub not ready after 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// procCPU is the process's user+system CPU time in seconds.
func procCPU(b *testing.B, pid int) float64 {
	cpu, _, err := statCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	return cpu
}

// statCPU is a process's user+system CPU seconds from /proc/<pid>/stat,
// and that of its exited children.
func statCPU(pid int) (self, children float64, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	var v [4]float64
	for i := range v {
		v[i], _ = strconv.ParseFloat(fields[11+i], 64)
	}
	return (v[0] + v[1]) / 100, (v[2] + v[3]) / 100, nil // USER_HZ
}

// commCPU sums the CPU seconds of every process named comm (the
// PostgreSQL server's processes), counting exited children too.
func commCPU(comm string) float64 {
	ents, _ := os.ReadDir("/proc")
	var sum float64
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if c, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err != nil || strings.TrimSpace(string(c)) != comm {
			continue
		}
		self, children, err := statCPU(pid)
		if err == nil {
			sum += self + children
		}
	}
	return sum
}

// selfCPU is this process's CPU seconds: the simulated agents'.
func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkTelemetryInProcess posts 50-connection batches from 32 agents
// to an in-process hub on SQLite: the per-batch cost of the intake (HTTP,
// JSON, identity, rates, queue and store), for profiling.
func BenchmarkTelemetryInProcess(b *testing.B) {
	dir := b.TempDir()
	h, err := newStarted(discardLog(), func() config.HubConfig {
		c := config.DefaultHubConfig()
		c.Store.DSN, c.Server.Port = filepath.Join(dir, "netmon.db"), 0
		c.Vault.File = filepath.Join(dir, "vault.key")
		c.Capture.Enabled, c.Geo.Online = false, false
		c.Geo.Dir, c.Record.Dir = filepath.Join(dir, "geoip"), filepath.Join(dir, "captures")
		c.Fleet.StaticToken = testStaticToken
		return c
	}())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Stop(context.Background())
	base := fmt.Sprintf("http://%s", h.Addr().String())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const agents = 32
	tokens := make([]string, agents)
	for i := range tokens {
		body, _ := json.Marshal(wire.Hello{Name: fmt.Sprintf("b-%d", i), MachineID: fmt.Sprintf("b-%d", i)})
		req, _ := http.NewRequest("POST", base+wire.PathHello, bytes.NewReader(body))
		req.Header.Set(wire.HeaderEnrollToken, testStaticToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var hr wire.HelloResponse
		_ = json.NewDecoder(resp.Body).Decode(&hr)
		resp.Body.Close()
		tokens[i] = hr.AgentToken
	}
	conns := make([]wire.Connection, 50)
	for i := range conns {
		conns[i] = wire.Connection{Proto: "tcp", LocalAddr: fmt.Sprintf("10.1.2.3:%d", 40000+i), RemoteAddr: fmt.Sprintf("198.51.100.%d:443", i), Status: "ESTABLISHED", PID: int32(i), Process: "firefox-esr"}
	}
	var seq atomic.Uint64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			agent := int(n % agents)
			s := n/agents + 1
			body, _ := json.Marshal(wire.Telemetry{TS: time.Now().Unix(), Seq: s, Connections: conns,
				Interfaces: []wire.Interface{{Name: "eth0", RxBytes: s * 1000, TxBytes: s * 500}}})
			req, _ := http.NewRequest("POST", base+wire.PathTelemetry, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tokens[agent])
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			if resp.StatusCode != 200 {
				raw, _ := io.ReadAll(resp.Body)
				b.Errorf("telemetry: %d %s", resp.StatusCode, raw)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}

// BenchmarkAgentBinary measures the agent process itself: CPU and RSS
// while it sends a batch every second, then while idle at the default
// 30 s interval (make bench-fleet).
func BenchmarkAgentBinary(b *testing.B) {
	if *measureBinary == "" {
		b.Skip("needs -measure-binary (make bench-fleet)")
	}
	dir := b.TempDir()
	port := freePort(b)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	hub := func(interval string) *exec.Cmd {
		cmd := exec.Command(*measureBinary, "hub", "-port", strconv.Itoa(port), "-db", filepath.Join(dir, "netmon.db"), "-log-level", "warn",
			"-enroll-token", testStaticToken, "-agent-interval", interval, "-capture=false", "-geoip-dir", filepath.Join(dir, "geoip"), "-ip-online-lookup=false")
		cmd.Env = append(os.Environ(), "NETMON_VAULT_KEY_FILE="+filepath.Join(dir, "vault.key"))
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		waitReady(b, base)
		return cmd
	}
	stop := func(cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }
	for range b.N {
		h := hub("1")
		agent := exec.Command(*measureBinary, "agent", "-hub-url", base, "-hub-token", testStaticToken, "-state", filepath.Join(dir, "agent.state.json"), "-log-level", "warn")
		agent.Dir = dir
		if err := agent.Start(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(3 * time.Second) // enrolled and sending
		const sending = 20 * time.Second
		c0 := procCPU(b, agent.Process.Pid)
		time.Sleep(sending)
		sendCPU := (procCPU(b, agent.Process.Pid) - c0) / sending.Seconds() * 100
		sendRSS := rssMB(b, agent.Process.Pid)
		stop(h)
		h = hub("30")
		time.Sleep(12 * time.Second) // the agent's next batch tells it the 30 s interval
		const idle = 60 * time.Second
		c0 = procCPU(b, agent.Process.Pid)
		time.Sleep(idle)
		idleCPU := (procCPU(b, agent.Process.Pid) - c0) / idle.Seconds() * 100
		idleRSS := rssMB(b, agent.Process.Pid)
		_ = agent.Process.Signal(syscall.SIGTERM)
		_ = agent.Wait()
		stop(h)
		b.ReportMetric(sendCPU, "send_cpu_%")
		b.ReportMetric(sendRSS, "send_rss_MB")
		b.ReportMetric(idleCPU, "idle_cpu_%")
		b.ReportMetric(idleRSS, "idle_rss_MB")
		b.Logf("agent: %.2f%% of a core and %.1f MB RSS sending every second; %.3f%% and %.1f MB at the 30 s interval", sendCPU, sendRSS, idleCPU, idleRSS)
	}
}
