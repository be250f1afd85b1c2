package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/storetest"
)

// stormEntries is a list of n listed domains and a name under each: a
// storm the ioc rule cannot group (one condition per entry).
func stormEntries(n int) (entries, names []string) {
	for i := range n {
		entries = append(entries, fmt.Sprintf("e%05d.test", i))
		names = append(names, fmt.Sprintf("x.e%05d.test", i))
	}
	return entries, names
}

// operatorWrites creates a silence and changes the alert configuration,
// returning how long each took.
func operatorWrites(t *testing.T, admin *client, silenceKey string, cooldown int) (silence, config time.Duration) {
	t.Helper()
	t0 := time.Now()
	admin.call("POST", "/api/v1/alerts/silences", map[string]any{"kind": "ioc", "key": silenceKey,
		"end": time.Now().Add(time.Hour).Unix(), "comment": "storm"}).must(t, 200)
	silence = time.Since(t0)
	t0 = time.Now()
	admin.call("PUT", "/api/alerts", map[string]any{"cooldown_min": cooldown}).must(t, 200)
	return silence, time.Since(t0)
}

// TestOperatorWritesDuringStorm: agent A reports one name under each of
// 20 000 listed domains — 20 000 conditions the rule cannot group. While
// the ioc cycle raises them, an operator creates a silence for agent B
// and changes the configuration: both answer 200 within a generous 2 s
// (the 1 s p99 target is BenchmarkOperatorWritesDuringStorm) and take
// effect — B's next listed name is silenced, the engine and GET
// /api/alerts show the new cooldown. The cycle is bounded: it stores 500
// events (the configured cap) and sheds the other 19 500, counted.
func TestOperatorWritesDuringStorm(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		entries, names := stormEntries(20000)
		h, admin, a, b := stormHub(t, dsn, entries, func(c *config.HubConfig) {
			c.Alerts.MaxWritesPerCycle, c.Alerts.CycleBudget = 500, 10*time.Minute
		})
		now := time.Now().Unix()
		var seqA, seqB uint64
		reportNames(t, h, a.AgentToken, &seqA, now, names)
		waitNames(t, h, now-now%60, len(names))

		ctx := context.Background()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.alerts.EvalIOC(ctx)
		}()
		// Wait until the storm is being stored.
		deadline := time.Now().Add(time.Minute)
		for {
			evs, err := h.db.ListAlertEvents(ctx, store.AlertFilter{Kind: "ioc", Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the storm stored nothing in a minute")
			}
			time.Sleep(5 * time.Millisecond)
		}
		silence, conf := operatorWrites(t, admin, fmt.Sprintf("%d|*", b.AgentID), 11)
		if silence > 2*time.Second || conf > 2*time.Second {
			t.Errorf("during the storm: silence took %s, configuration %s (bound 2 s)", silence, conf)
		}
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			t.Fatal("the storm's cycle did not end in 5 minutes")
		}

		evs, err := h.db.ListAlertEvents(ctx, store.AlertFilter{Kind: "ioc", Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 500 {
			t.Errorf("the cycle stored %d events, want the cap of 500", len(evs))
		}
		if got := adminMetric(t, admin, "netmon_alerting_shed_total", `kind="ioc",reason="cycle_cap"`); got != 19500 {
			t.Errorf("shed %v, want 19500", got)
		}

		// Both changes took effect.
		if got := h.alerts.Settings().CooldownMin; got != 11 {
			t.Errorf("engine cooldown %d, want 11", got)
		}
		if body := admin.call("GET", "/api/alerts", nil).must(t, 200).body; !strings.Contains(body, `"cooldown_min":11`) {
			t.Errorf("GET /api/alerts: %s", body)
		}
		reportNames(t, h, b.AgentToken, &seqB, now, []string{"y.e00001.test"})
		waitNames(t, h, now-now%60, len(names)+1)
		h.alerts.EvalIOC(ctx)
		evs, err = h.db.ListAlertEvents(ctx, store.AlertFilter{Kind: "ioc", Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.AgentID == b.AgentID {
				t.Errorf("agent B's event was stored despite the silence: %+v", e)
			}
		}
		if got := adminMetric(t, admin, "netmon_alerting_conditions_total", `kind="ioc",outcome="silenced"`); got != 1 {
			t.Errorf("silenced conditions %v, want 1", got)
		}
	})
}

// BenchmarkOperatorWritesDuringStorm: the storm of
// TestOperatorWritesDuringStorm (20 000 ungroupable ioc conditions from
// one agent, the default cycle bounds) on SQLite, with an operator
// creating silences and changing the configuration in a loop for as long
// as each cycle runs. Reported: the p99 and maximum of those writes
// (target: p99 under 1 s), how many there were per cycle and the cycle's
// duration.
func BenchmarkOperatorWritesDuringStorm(b *testing.B) {
	dir := b.TempDir()
	entries, names := stormEntries(20000)
	list := filepath.Join(dir, "ioc.txt")
	if err := os.WriteFile(list, []byte(strings.Join(entries, "\n")+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	c := config.DefaultHubConfig()
	c.Store.DSN, c.Server.Port = filepath.Join(dir, "netmon.db"), 0
	c.Vault.File = filepath.Join(dir, "vault.key")
	c.Capture.Enabled, c.Geo.Online = false, false
	c.Geo.Dir, c.Record.Dir = filepath.Join(dir, "geoip"), filepath.Join(dir, "captures")
	c.Fleet.StaticToken, c.Auth.Password = testStaticToken, "admin-password-1"
	c.Alerts.Enabled, c.Threat.IOCFile = false, list
	h, err := newStarted(discardLog(), c)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Stop(context.Background())
	base := "http://" + h.Addr().String()
	call := func(method, path, bearer string, body any, hdr map[string]string) []byte {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
		}
		return out
	}
	var login struct{ Token string }
	_ = json.Unmarshal(call("POST", "/api/login", "", map[string]any{"password": "admin-password-1"}, nil), &login)
	call("PUT", "/api/alerts", login.Token, map[string]any{"ioc": map[string]any{"enabled": true}}, nil)
	var agent wire.HelloResponse
	_ = json.Unmarshal(call("POST", wire.PathHello, "", wire.Hello{Name: "ws-storm", MachineID: "m-storm"},
		map[string]string{wire.HeaderEnrollToken: testStaticToken}), &agent)
	var seq uint64
	var lat []time.Duration
	var cycles time.Duration
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ts := time.Now().Unix() + int64(i)*60 // a new report of every name
		for from := 0; from < len(names); from += 5000 {
			dns := []map[string]any{}
			for _, n := range names[from:min(from+5000, len(names))] {
				dns = append(dns, map[string]any{"domain": n, "process": "curl", "queries": 1, "responses": 1})
			}
			seq++
			call("POST", wire.PathTelemetry, agent.AgentToken, map[string]any{"ts": ts, "seq": seq,
				"interfaces": []wire.Interface{{Name: "eth0"}}, "connections": []any{}, "dns": dns}, nil)
		}
		for {
			ns, err := h.db.ObservedNames(ctx, ts-ts%60)
			if err == nil && len(ns) >= len(names) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		b.StartTimer()
		done := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(done)
			h.alerts.EvalIOC(ctx)
		}()
		for k := 0; ; k++ {
			select {
			case <-done:
			default:
				t0 := time.Now()
				call("POST", "/api/v1/alerts/silences", login.Token, map[string]any{"kind": "ioc", "key": fmt.Sprintf("none-%d-%d", i, k),
					"end": time.Now().Add(time.Hour).Unix()}, nil)
				lat = append(lat, time.Since(t0))
				t0 = time.Now()
				call("PUT", "/api/alerts", login.Token, map[string]any{"cooldown_min": 10 + k%2}, nil)
				lat = append(lat, time.Since(t0))
				continue
			}
			break
		}
		cycles += time.Since(start)
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max_ms")
		b.ReportMetric(float64(len(lat))/float64(b.N), "writes/cycle")
	}
	b.ReportMetric(cycles.Seconds()/float64(b.N), "cycle_s")
}
