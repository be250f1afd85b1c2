package live

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// siteTicks is a Tick source whose every tick carries one alert event of
// each of sites a and b and one of the hub (""), and counts how often the
// broker asked for each site's view.
type siteTicks struct {
	mu    sync.Mutex
	n     int64
	views map[string]int
}

func (s *siteTicks) Tick(context.Context) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	evs := []AlertEvent{
		{ID: s.n*10 + 1, Kind: "proc", Key: "1|a", Site: "a"},
		{ID: s.n*10 + 2, Kind: "proc", Key: "2|b", Site: "b"},
		{ID: s.n*10 + 3, Kind: "bw", Key: "hub|in"},
	}
	return countedTick{Tick{Type: "tick", AlertEvents: evs}, s}, nil
}

type countedTick struct {
	Tick
	src *siteTicks
}

func (t countedTick) ForSite(site string) any {
	t.src.mu.Lock()
	t.src.views[site]++
	t.src.mu.Unlock()
	return t.Tick.ForSite(site)
}

// TestTickScopedBySite: a client bound to site a receives only site a's
// alert events, b only b's, a client of every site all of them (exact
// ids, tick after tick), and the broker renders a tick once per distinct
// site, not once per client: five clients of three scopes cost three
// renderings a tick.
func TestTickScopedBySite(t *testing.T) {
	src := &siteTicks{views: map[string]int{}}
	ks := &keySessions{valid: map[string]bool{"a1": true, "a2": true, "a3": true, "b1": true, "all": true},
		sites: map[string]string{"a1": "a", "a2": "a", "a3": "a", "b1": "b"}}
	cfg := DefaultConfig()
	cfg.Interval = 50 * time.Millisecond
	b, srv := startBrokerWith(t, cfg, Deps{Source: src, Sessions: ks})
	conns := map[string]*websocket.Conn{}
	for _, key := range []string{"a1", "a2", "a3", "b1", "all"} {
		c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPHeader: http.Header{"X-Key": {key}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		conns[key] = c
	}
	eventuallyClients(t, b, 5)
	want := map[string][]int64{"a1": {1}, "a2": {1}, "a3": {1}, "b1": {2}, "all": {1, 2, 3}}
	for key, c := range conns {
		for range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			_, raw, err := c.Read(ctx)
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			var tick struct {
				AlertEvents []map[string]any `json:"alert_events"`
			}
			if err := json.Unmarshal(raw, &tick); err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, e := range tick.AlertEvents {
				if _, leaked := e["site"]; leaked {
					t.Errorf("%s: the event's site is sent: %v", key, e)
				}
				got = append(got, int64(e["id"].(float64))%10)
			}
			slices.Sort(got)
			if fmt.Sprint(got) != fmt.Sprint(want[key]) {
				t.Fatalf("%s: alert events %v (ids mod 10), want %v: %s", key, got, want[key], raw)
			}
		}
	}
	_ = b.Stop()
	src.mu.Lock()
	defer src.mu.Unlock()
	// Every tick once all five were connected rendered each scope once.
	if src.views["a"] > int(src.n) || src.views["b"] > int(src.n) || src.views[""] > int(src.n) {
		t.Errorf("%d ticks rendered %v times per site, want at most once per tick and site", src.n, src.views)
	}
}

// TestSiteMoveFollowsNextTick: a user moved to another site gets that
// site's events from the recheck on, without reconnecting.
func TestSiteMoveFollowsNextTick(t *testing.T) {
	src := &siteTicks{views: map[string]int{}}
	ks := &keySessions{valid: map[string]bool{"u": true}, sites: map[string]string{"u": "a"}}
	cfg := DefaultConfig()
	cfg.Interval = 50 * time.Millisecond
	_, srv := startBrokerWith(t, cfg, Deps{Source: src, Sessions: ks})
	c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPHeader: http.Header{"X-Key": {"u"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	read := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, raw, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	if raw := read(); !strings.Contains(raw, `"key":"1|a"`) || strings.Contains(raw, `"key":"2|b"`) {
		t.Fatalf("site a's client got %s", raw)
	}
	ks.mu.Lock()
	ks.sites["u"] = "b"
	ks.mu.Unlock()
	deadline := time.Now().Add(3 * time.Second)
	for {
		raw := read()
		if strings.Contains(raw, `"key":"2|b"`) && !strings.Contains(raw, `"key":"1|a"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the move to b: %s", raw)
		}
	}
}

func eventuallyClients(t *testing.T, b *Broker, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for b.Clients() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients, want %d", b.Clients(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
