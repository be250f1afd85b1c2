package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/alerting/notify"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// Storms (issue 28 items 7 and 8, RELIABILITY case 35), through the real
// path: agents' telemetry → observed names → the ioc rule → the engine →
// the notifier → a local webhook; operators through the HTTP API.

// stormWebhook records what a local webhook receives (generic_url: the
// body is the event).
type stormWebhook struct {
	mu  sync.Mutex
	got []record.AlertEvent
}

func (w *stormWebhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var ev record.AlertEvent
	_ = json.Unmarshal(b, &ev)
	w.mu.Lock()
	w.got = append(w.got, ev)
	w.mu.Unlock()
}

func (w *stormWebhook) events() []record.AlertEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]record.AlertEvent(nil), w.got...)
}

// reportNames sends names as an agent's DNS observations of minute ts, in
// batches the intake accepts (5 000 rows), and waits until stored.
func reportNames(t *testing.T, h *testHub, token string, seq *uint64, ts int64, names []string) {
	t.Helper()
	for from := 0; from < len(names); from += 5000 {
		to := min(from+5000, len(names))
		dns := make([]map[string]any, 0, to-from)
		for _, n := range names[from:to] {
			dns = append(dns, map[string]any{"domain": n, "process": "curl", "queries": 1, "responses": 1})
		}
		*seq++
		telemetry(t, h, token, map[string]any{"ts": ts, "seq": *seq, "interfaces": []wire.Interface{{Name: "eth0"}},
			"connections": []any{}, "dns": dns}).must(t, 200)
	}
}

// stormHub starts a hub with an ioc list of entries, the ioc rule on and
// the alert loops off (the test runs the cycles), and enrolls agents A
// and B.
func stormHub(t *testing.T, dsn string, entries []string, mutate func(*config.HubConfig)) (h *testHub, admin *client, a, b wire.HelloResponse) {
	t.Helper()
	list := filepath.Join(t.TempDir(), "ioc.txt")
	if err := os.WriteFile(list, []byte("# storm list\n"+strings.Join(entries, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, admin = fleetHub(t, dsn, func(c *config.HubConfig) {
		c.Alerts.Enabled = false
		c.Threat.IOCFile = list
		if mutate != nil {
			mutate(c)
		}
	})
	admin.call("PUT", "/api/alerts", `{"ioc":{"enabled":true}}`).must(t, 200)
	a = enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-storm", MachineID: "m-storm"}))
	b = enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-quiet", MachineID: "m-quiet"}))
	return h, admin, a, b
}

// waitNames waits until the store lists want names reported since ts.
func waitNames(t *testing.T, h *testHub, ts int64, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ns, err := h.db.ObservedNames(context.Background(), ts)
		if err == nil && len(ns) >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d names stored, want %d (%v)", len(ns), want, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// adminMetric sums a metric's samples whose labels contain filter, as
// /metrics shows them to an admin.
func adminMetric(t *testing.T, admin *client, name, filter string) float64 {
	t.Helper()
	body := admin.call("GET", "/metrics", nil).must(t, 200).body
	var sum float64
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		labels, value, _ := strings.Cut(rest, " ")
		if strings.Contains(labels, filter) {
			v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
			sum += v
		}
	}
	return sum
}

// TestIOCStormGroupedAndFair: agent A reports 20 000 distinct subdomains
// of one listed domain and one name under each of 30 other listed
// domains; agent B one listed name. A gets exactly one event per listed
// entry (31), the storm's counting its 20 000 names; B's severity-8 event
// reaches a real local webhook exactly once; A costs the webhook its
// burst of 5 and digests summing the other 26; every event the notifier
// took is routed, summed in a digest or counted as dropped by reason.
func TestIOCStormGroupedAndFair(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		hook := &stormWebhook{}
		srv := httptest.NewServer(hook)
		defer srv.Close()
		entries := []string{"evil.test", "c2.example"}
		for i := range 30 {
			entries = append(entries, fmt.Sprintf("bad%d.example", i))
		}
		h, admin, a, b := stormHub(t, dsn, entries, func(c *config.HubConfig) {
			c.Outbound.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
			c.Notify.Poll = 100 * time.Millisecond
			c.Notify.RateBurst, c.Notify.RateEvery, c.Notify.DigestEvery = 5, time.Hour, 300*time.Millisecond
		})
		admin.call("PUT", "/api/alerts", map[string]any{"notifiers": map[string]any{"generic_url": srv.URL + "/hook"}}).must(t, 200)

		now := time.Now().Unix()
		var seqA, seqB uint64
		var names []string
		for i := range 20000 {
			names = append(names, fmt.Sprintf("h%05d.evil.test", i))
		}
		for i := range 30 {
			names = append(names, fmt.Sprintf("www.bad%d.example", i))
		}
		reportNames(t, h, a.AgentToken, &seqA, now, names)
		reportNames(t, h, b.AgentToken, &seqB, now, []string{"beacon.c2.example"})
		waitNames(t, h, now-now%60, 20031)

		ctx := context.Background()
		h.alerts.EvalIOC(ctx)

		evs, err := h.db.ListAlertEvents(ctx, store.AlertFilter{Kind: "ioc", Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		var ofA []record.AlertEvent
		var ofB []record.AlertEvent
		for _, e := range evs {
			switch e.AgentID {
			case a.AgentID:
				ofA = append(ofA, e)
			case b.AgentID:
				ofB = append(ofB, e)
			}
		}
		if len(ofA) != 31 {
			t.Fatalf("agent A has %d ioc events, want 31 (one per listed entry)", len(ofA))
		}
		var storm record.AlertEvent
		for _, e := range ofA {
			if e.Key == fmt.Sprintf("%d|evil.test", a.AgentID) {
				storm = e
			}
		}
		wantMsg := fmt.Sprintf(`agent %d saw 20000 names listed as evil.test in `, a.AgentID)
		if storm.Key != fmt.Sprintf("%d|evil.test", a.AgentID) || storm.Count != 20000 || !strings.HasPrefix(storm.Message, wantMsg) ||
			!strings.HasSuffix(storm.Message, " and 19 995 more") {
			t.Errorf("the storm's event: %+v", storm)
		}
		if len(ofB) != 1 || ofB[0].Key != fmt.Sprintf("%d|c2.example", b.AgentID) || ofB[0].Severity != 8 {
			t.Fatalf("agent B's events: %+v", ofB)
		}

		// Every A event beyond the burst of 5 is in a digest.
		digested := func(got []record.AlertEvent) (single map[int64]int, digests []record.AlertEvent, sum int64) {
			single = map[int64]int{}
			for _, e := range got {
				if e.Kind == notify.KindDigest {
					digests = append(digests, e)
					sum += e.Count
					continue
				}
				single[e.AgentID]++
			}
			return
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			single, _, sum := digested(hook.events())
			if single[b.AgentID] >= 1 && int64(single[a.AgentID])+sum >= 31 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the webhook got %d requests: %+v", len(hook.events()), single)
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(time.Second) // nothing more may come
		got := hook.events()
		single, digests, sum := digested(got)
		if single[b.AgentID] != 1 {
			t.Errorf("agent B's event reached the webhook %d times, want 1", single[b.AgentID])
		}
		if single[a.AgentID] != 5 || sum != 26 {
			t.Errorf("agent A: %d single requests and digests summing %d, want 5 and 26", single[a.AgentID], sum)
		}
		for _, d := range digests {
			if d.AgentID != a.AgentID || !strings.HasPrefix(d.Message, fmt.Sprintf("and %d more ioc alerts from agent %d since ", d.Count, a.AgentID)) {
				t.Errorf("digest %+v", d)
			}
		}
		if len(got) > 5+1+4 {
			t.Errorf("the webhook got %d requests, want at most 10", len(got))
		}
		// Conservation in the notifier: 32 events taken = routed +
		// digested + dropped (by reason).
		routed := adminMetric(t, admin, "netmon_notify_routed_total", `channel="generic_url"`)
		held := adminMetric(t, admin, "netmon_notify_digested_total", `channel="generic_url"`)
		dropped := adminMetric(t, admin, "netmon_notify_dropped_total", "reason=")
		if routed-float64(len(digests))+held+dropped != 32 {
			t.Errorf("routed %v (with %d digests) + digested %v + dropped %v != 32 events", routed, len(digests), held, dropped)
		}
	})
}
