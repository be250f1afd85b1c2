package hub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"netmon/app/ai/provider/providertest"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// The figures of issue 32 (make bench-ai):
//
//   - BenchmarkAIFirstDelta: from the POST of a message to the first
//     delta line read by the HTTP client, less the provider's own first
//     byte (a fake that waits aiBenchFirstByte before its headers):
//     target ≤ 50 ms. A first turn (the scope's context built from the
//     store, stored with the question) and a later turn (the history read
//     back), on SQLite and PostgreSQL; on an empty fleet, then on 1 000
//     agents with their last hour of telemetry (the fleet scope's first
//     turn reads it all: BenchmarkFleetFacts1000Agents in app/ai/facts
//     times that read alone).
//   - BenchmarkAIConcurrentStreams: 50 answers streaming at once add at
//     most 50 MB of RSS.
//
// The hub runs in the benchmark's process (as the other hub tests do);
// so do the fake provider and the HTTP clients, so the RSS growth is an
// upper bound of the hub's own share.

// aiBenchFirstByte is the fake provider's first-byte delay.
const aiBenchFirstByte = 20 * time.Millisecond

// aiBenchTurnsPerConversation: a later turn is measured in conversations
// of at most this many turns, so the history stays that of a real
// exchange (and under ai.max_turns).
const aiBenchTurnsPerConversation = 10

// aiBench is a hub with the assistant on, signed in as its bootstrap
// admin, with an HTTP client of its own.
type aiBench struct {
	base   string
	cookie string
	hc     *http.Client
	db     *store.DB // the in-process hub's, to seed; nil for the binary
}

func startAIBench(b *testing.B, dsn string, mutate func(*config.HubConfig)) *aiBench {
	b.Helper()
	dir := b.TempDir()
	cfg := config.DefaultHubConfig()
	cfg.Store.DSN, cfg.Server.Port = dsn, 0
	cfg.Vault.File = filepath.Join(dir, "vault.key")
	cfg.Record.Dir, cfg.Geo.Dir, cfg.Geo.Online = filepath.Join(dir, "captures"), filepath.Join(dir, "geoip"), false
	// The packet capture would capture the benchmark's own loopback
	// traffic: noise that is not the assistant's.
	cfg.Capture.Enabled, cfg.Capture.HostConns = false, false
	cfg.Auth.Password = "bench-password-1"
	cfg.AI.Enabled = true
	if mutate != nil {
		mutate(&cfg)
	}
	h, err := newStarted(discardLog(), cfg)
	if err != nil {
		b.Fatalf("start hub: %v", err)
	}
	b.Cleanup(func() { _ = h.Stop(context.Background()) })
	a := signInAIBench(b, base(h), cfg.Auth.Password)
	a.db = h.db
	return a
}

// signInAIBench signs in to the hub at base with its legacy password.
func signInAIBench(b *testing.B, base, password string) *aiBench {
	tr := &http.Transport{MaxIdleConnsPerHost: 128, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	a := &aiBench{base: base, hc: &http.Client{Transport: tr}}
	var login struct{ Token string }
	a.must(b, "POST", "/api/login", map[string]any{"password": password}, &login)
	a.cookie = login.Token
	return a
}

// do sends a JSON request as the signed-in admin.
func (a *aiBench) do(method, path string, body any) (*http.Response, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest(method, a.base+path, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if a.cookie != "" {
		req.AddCookie(&http.Cookie{Name: "nm_session", Value: a.cookie})
	}
	return a.hc.Do(req)
}

// must sends a request that must answer 200 and decodes its body in out.
func (a *aiBench) must(b *testing.B, method, path string, body, out any) {
	b.Helper()
	resp, err := a.do(method, path, body)
	if err != nil {
		b.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			b.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// addProvider registers a compat provider at url.
func (a *aiBench) addProvider(b *testing.B, url string) int64 {
	var p struct{ ID int64 }
	a.must(b, "POST", "/api/v1/ai/providers", map[string]any{"name": "bench", "kind": "compat", "base_url": url, "default_model": "fake-small"}, &p)
	return p.ID
}

// conversation opens a fleet conversation.
func (a *aiBench) conversation(b *testing.B) int64 {
	var c struct{ ID int64 }
	a.must(b, "POST", "/api/v1/ai/conversations", map[string]any{"scope_kind": "fleet"}, &c)
	return c.ID
}

// answer is one streamed answer as the client read it.
type answer struct {
	firstDelta time.Duration // POST sent to the first delta line read
	deltas     int
	text       strings.Builder
	done       string // the done event's line, "" when none came
}

// ask posts a question and reads the SSE answer to its end; opened is
// called once the 200 and its headers arrived. Safe for goroutines: it
// returns errors, never fails the benchmark.
func (a *aiBench) ask(conv int64, question string, opened func()) (*answer, error) {
	t0 := time.Now()
	resp, err := a.do("POST", fmt.Sprintf("/api/v1/ai/conversations/%d/messages", conv), map[string]any{"content": question})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		raw, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("POST message: %d %s", resp.StatusCode, raw)
	}
	if opened != nil {
		opened()
	}
	ans := &answer{}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return ans, fmt.Errorf("stream ended without done after %d deltas: %w", ans.deltas, err)
		}
		switch {
		case line == "\n":
		case strings.HasPrefix(line, `data: {"delta":`):
			if ans.deltas == 0 {
				ans.firstDelta = time.Since(t0)
			}
			ans.deltas++
			var ev struct{ Delta string }
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev)
			ans.text.WriteString(ev.Delta)
		case strings.HasPrefix(line, `data: {"done":true`):
			ans.done = strings.TrimSuffix(line, "\n")
			_, _ = io.Copy(io.Discard, resp.Body)
			return ans, nil
		default:
			return ans, fmt.Errorf("unexpected event %q", line)
		}
	}
}

// aiBenchDSN is a fresh database of dialect. PostgreSQL is a peer of
// the benchmark: without NETMON_TEST_PG_DSN it fails, it is not skipped.
func aiBenchDSN(b *testing.B, dialect string) string {
	if dialect == "sqlite" {
		return filepath.Join(b.TempDir(), "netmon.db")
	}
	if os.Getenv(storetest.EnvPostgresDSN) == "" {
		b.Fatalf("%s is not set (make bench-ai sets it)", storetest.EnvPostgresDSN)
	}
	return storetest.PostgresDSN(b)
}

// BenchmarkAIFirstDelta: overhead-ms/op is the mean of (first delta
// read by the client) − aiBenchFirstByte, p50/p95 its percentiles over
// the iterations; ns/op is a whole turn (POST to the done event).
func BenchmarkAIFirstDelta(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			a := startAIBench(b, aiBenchDSN(b, dialect), nil)
			fake := providertest.New(b, "compat")
			fake.Push(providertest.Script{FirstByteDelay: aiBenchFirstByte, Chunks: providertest.Stream("compat", providertest.Answer{
				TokensIn: 420, TokensOut: 6, Parts: []providertest.Part{{Text: "The fleet "}, {Text: "looks healthy."}}})})
			a.addProvider(b, fake.URL)
			b.Run("first-turn", func(b *testing.B) { a.benchFirstDelta(b, true) })
			b.Run("later-turn", func(b *testing.B) { a.benchFirstDelta(b, false) })
			// The same with a fleet behind the scope: the first turn's
			// context then reads an hour of 1 000 agents' telemetry.
			start := time.Now()
			seedAIBenchFleet(b, a.db, 1000)
			b.Logf("%s: 1 000 agents and their hour of telemetry seeded in %s", dialect, time.Since(start).Round(time.Millisecond))
			b.Run("first-turn-1000-agents", func(b *testing.B) { a.benchFirstDelta(b, true) })
			b.Run("later-turn-1000-agents", func(b *testing.B) { a.benchFirstDelta(b, false) })
		})
	}
}

// seedAIBenchFleet enrols n agents over 4 sites with the last hour of
// their 30 s telemetry (what the fleet scope's busiest agents read), the
// connections table in the last sample.
func seedAIBenchFleet(b *testing.B, db *store.DB, n int) {
	ctx := context.Background()
	now := time.Now().Unix()
	ids := make([]int64, n)
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i := range ids {
			id, _, err := tx.CreateAgent(ctx, store.Agent{Name: fmt.Sprintf("ws-%04d", i), Site: fmt.Sprintf("site-%d", i%4),
				TokenHash: fmt.Sprintf("h%d", i), EnrolledAt: now - 30*86400})
			if err != nil {
				return err
			}
			ids[i] = id
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var tel []record.Telemetry
	for k, at := 0, now-3600+15; at < now; k, at = k+1, at+30 {
		for i, id := range ids {
			ip := fmt.Sprintf("10.%d.%d.%d", i%4, i/250, i%250+1)
			rate := float64(1000 + (i*37+int(at/30))%5000)
			t := record.Telemetry{AgentID: id, Seq: uint64(k + 1), TS: at, RemoteIP: ip, In: rate * 3, Out: rate, PPS: rate / 500, HasRates: true, AttrMethod: "ebpf"}
			if at+30 >= now {
				t.Rates, _ = json.Marshal([]map[string]any{{"name": "eth0", "rx_bps": rate * 24, "tx_bps": rate * 8, "pps": rate / 500, "speed_mbps": 1000}})
			}
			tel = append(tel, t)
		}
		if len(tel) >= 50_000 {
			if _, err := db.WriteTelemetry(ctx, tel); err != nil {
				b.Fatal(err)
			}
			tel = tel[:0]
		}
	}
	if _, err := db.WriteTelemetry(ctx, tel); err != nil {
		b.Fatal(err)
	}
}

func (a *aiBench) benchFirstDelta(b *testing.B, firstTurn bool) {
	const want = `data: {"done":true,"tokens_in":420,"tokens_out":6}`
	over := make([]float64, 0, b.N)
	var conv int64
	turns := aiBenchTurnsPerConversation
	b.ResetTimer()
	for range b.N {
		if firstTurn || turns == aiBenchTurnsPerConversation {
			b.StopTimer()
			conv, turns = a.conversation(b), 0
			if !firstTurn { // its first turn, with the context, outside the measure
				if _, err := a.ask(conv, "what is on the fleet?", nil); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
		}
		ans, err := a.ask(conv, "what changed in the last hour?", nil)
		if err != nil {
			b.Fatal(err)
		}
		if ans.done != want || ans.text.String() != "The fleet looks healthy." {
			b.Fatalf("answer %q, done %q", ans.text.String(), ans.done)
		}
		turns++
		over = append(over, float64(ans.firstDelta-aiBenchFirstByte)/float64(time.Millisecond))
	}
	b.StopTimer()
	sum := 0.0
	for _, v := range over {
		sum += v
	}
	sort.Float64s(over)
	b.ReportMetric(sum/float64(len(over)), "overhead-ms/op")
	b.ReportMetric(pct(over, 0.50), "p50-ms")
	b.ReportMetric(pct(over, 0.95), "p95-ms")
}

// aiBenchStreams, aiBenchChunks and aiBenchChunkEvery: 50 answers of 30
// fragments, one every 100 ms (3 s each), all open at once.
const (
	aiBenchStreams    = 50
	aiBenchChunks     = 30
	aiBenchChunkEvery = 100 * time.Millisecond
)

// BenchmarkAIConcurrentStreams: rss-growth-MB is the peak VmRSS of the
// hub while the 50 streams are open, less its VmRSS after one warm-up
// answer: what 50 concurrent answers add. in-process: the hub runs in
// the benchmark's process, with the fake provider and the 50 clients
// (an upper bound of the hub's share); the baseline is taken after a
// full GC (runtime.GC, debug.FreeOSMemory). binary (with
// -measure-binary, as make bench-ai runs it): the built hub in a process
// of its own, driven over HTTP, its baseline read after the warm-up and
// 2 s of quiet (no GC can be forced there). max-open is how many answers
// were open at once.
func BenchmarkAIConcurrentStreams(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		fake, want := aiStreamsFake(b)
		a := startAIBench(b, aiBenchDSN(b, "sqlite"), func(c *config.HubConfig) { c.AI.MaxStreams = 64 })
		a.addProvider(b, fake.URL)
		a.benchStreams(b, want, func() float64 {
			runtime.GC()
			debug.FreeOSMemory()
			return selfRSSMB(b)
		}, selfRSSMB)
	})
	b.Run("binary", func(b *testing.B) {
		if *measureBinary == "" {
			b.Skip("needs -measure-binary (make bench-ai)")
		}
		fake, want := aiStreamsFake(b)
		dir := b.TempDir()
		port := freePort(b)
		const password = "bench-password-1"
		p := startCmd(b, dir, nil, *measureBinary, "hub", "-port", fmt.Sprint(port), "-db", filepath.Join(dir, "netmon.db"),
			"-log-level", "warn", "-capture=false", "-ip-online-lookup=false", "-host-conns=false", "-geoip-dir", filepath.Join(dir, "geoip"),
			"-auth-password", password, "-ai", "-llm-base-url", fake.URL, "-llm-model", "fake-small")
		defer p.stop(b)
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		waitHTTP(b, base+"/readyz")
		a := signInAIBench(b, base, password)
		pid := p.cmd.Process.Pid
		a.benchStreams(b, want, func() float64 {
			time.Sleep(2 * time.Second)
			return rssMB(b, pid)
		}, func(b *testing.B) float64 { return rssMB(b, pid) })
	})
}

// aiStreamsFake is a compat fake answering every chat with
// aiBenchChunks fragments, one every aiBenchChunkEvery; want is the
// answer in full.
func aiStreamsFake(b *testing.B) (*providertest.Server, string) {
	fake := providertest.New(b, "compat")
	parts := make([]providertest.Part, aiBenchChunks)
	var full strings.Builder
	for i := range parts {
		parts[i] = providertest.Part{Delay: aiBenchChunkEvery, Text: fmt.Sprintf("Fragment %02d of a long answer about the fleet's health. ", i)}
		full.WriteString(parts[i].Text)
	}
	fake.Push(providertest.Script{Chunks: providertest.Stream("compat", providertest.Answer{TokensIn: 900, TokensOut: 450, Parts: parts})})
	return fake, full.String()
}

// benchStreams runs aiBenchStreams answers at once, b.N times; baseline
// reads the RSS before them, rss while they stream.
func (a *aiBench) benchStreams(b *testing.B, want string, baseline func() float64, rss func(*testing.B) float64) {
	const done = `data: {"done":true,"tokens_in":900,"tokens_out":450}`
	check := func(ans *answer, err error) error {
		switch {
		case err != nil:
			return err
		case ans.done != done || ans.deltas != aiBenchChunks || ans.text.String() != want:
			return fmt.Errorf("%d deltas, done %q", ans.deltas, ans.done)
		}
		return nil
	}
	if err := check(a.ask(a.conversation(b), "warm up", nil)); err != nil {
		b.Fatal(err)
	}
	var growth, base0, peakRSS, maxOpen float64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		convs := make([]int64, aiBenchStreams)
		for i := range convs {
			convs[i] = a.conversation(b)
		}
		base := baseline()
		b.StartTimer()

		var open, most atomic.Int64
		var peak atomic.Uint64 // MB × 1000
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if open.Load() == aiBenchStreams { // the peak while all are open
						if v := uint64(rss(b) * 1000); v > peak.Load() {
							peak.Store(v)
						}
					}
				}
			}
		}()
		var wg sync.WaitGroup
		errc := make(chan error, aiBenchStreams)
		for i, conv := range convs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ans, err := a.ask(conv, fmt.Sprintf("stream %d: tell me everything", i), func() {
					n := open.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
				})
				open.Add(-1)
				if err := check(ans, err); err != nil {
					errc <- fmt.Errorf("stream %d: %w", i, err)
				}
			}()
		}
		wg.Wait()
		close(stop)
		<-sampled
		b.StopTimer()
		close(errc)
		for err := range errc {
			b.Error(err)
		}
		if most.Load() != aiBenchStreams {
			b.Fatalf("at most %d answers open at once, want %d", most.Load(), aiBenchStreams)
		}
		p := float64(peak.Load()) / 1000
		if p == 0 {
			b.Fatal("no RSS sample while all streams were open")
		}
		growth = max(growth, p-base)
		base0, peakRSS, maxOpen = base, p, float64(most.Load())
	}
	b.ReportMetric(growth, "rss-growth-MB")
	b.ReportMetric(base0, "baseline-MB")
	b.ReportMetric(peakRSS, "peak-MB")
	b.ReportMetric(maxOpen, "max-open")
}

// selfRSSMB is this process's VmRSS: the in-process hub's.
func selfRSSMB(b *testing.B) float64 { return rssMB(b, os.Getpid()) }
