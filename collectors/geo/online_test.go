package geo

import (
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// publicAddrs returns n distinct global IPv4 addresses from 45.0.0.0.
func publicAddrs(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	a := netip.MustParseAddr("45.0.0.1")
	for i := range out {
		out[i] = a
		a = a.Next()
	}
	return out
}

func TestOnlineBatching(t *testing.T) {
	f := newFakeBatch(t)
	addrs := publicAddrs(250)
	for i, a := range addrs {
		f.set(a.String(), "US", fmt.Sprintf("AS%d Org %d", 64500+i, i))
	}
	cfg := onlineConfig(t, f.url())
	cfg.BatchInterval = 100 * time.Millisecond
	g, reg := startGeo(t, cfg)

	// Every address three times, once IPv4-mapped: queued once.
	for range 2 {
		for _, a := range addrs {
			if _, _, ok := g.Lookup(a); ok {
				t.Fatalf("Lookup(%s) answered before any batch", a)
			}
		}
	}
	for _, a := range addrs {
		g.Lookup(netip.AddrFrom16(a.As16()))
	}
	eventually(t, 10*time.Second, "every address answered", func() bool {
		_, _, ok := g.Lookup(addrs[len(addrs)-1])
		return ok
	})

	requests, times := f.log()
	var sizes []int
	var sent []string
	for _, r := range requests {
		sizes = append(sizes, len(r))
		sent = append(sent, r...)
	}
	if diff := cmp.Diff(sizes, []int{100, 100, 50}); diff != "" {
		t.Errorf("request sizes (-got, +want):\n%s", diff)
	}
	want := make([]string, len(addrs))
	for i, a := range addrs {
		want[i] = a.String()
	}
	if diff := cmp.Diff(sent, want); diff != "" {
		t.Errorf("addresses sent, in order, each once (-got, +want):\n%s", diff)
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 80*time.Millisecond {
			t.Errorf("requests %d and %d only %v apart, want one per 100ms interval", i-1, i, gap)
		}
	}

	// Cached answers, and no request for them.
	for i, a := range addrs {
		info, ok := g.Info(a)
		want := Info{Country: "US", ASN: fmt.Sprintf("AS%d", 64500+i), Org: fmt.Sprintf("Org %d", i)}
		if diff := cmp.Diff(result{info, ok}, result{want, true}); diff != "" {
			t.Fatalf("Info(%s) (-got, +want):\n%s", a, diff)
		}
	}
	waitRounds(t, g, 3)
	if n := f.count(); n != 3 {
		t.Errorf("%d requests after cache hits, want still 3", n)
	}
	if got := metricValue(t, reg, "netmon_geo_online_cache_entries"); got != 250 {
		t.Errorf("cache entries %v, want 250", got)
	}
	if got := metricValue(t, reg, "netmon_geo_online_batches_total", "result", "ok"); got != 3 {
		t.Errorf("ok batches %v, want 3", got)
	}
}

func TestOnlineNeverSendsNonGlobal(t *testing.T) {
	f := newFakeBatch(t)
	f.set("8.8.8.8", "US", "AS15169 Google LLC")
	g, reg := startGeo(t, onlineConfig(t, f.url()))
	nonGlobal := []string{
		"10.0.0.1", "172.16.5.4", "192.168.1.1", "127.0.0.1", "::1", "169.254.169.254",
		"fe80::1", "fd00::1", "fc00::1", "224.0.0.1", "ff02::1", "0.0.0.0", "::",
		"100.64.0.1", "192.0.2.1", "2001:db8::1", "255.255.255.255", "::ffff:192.168.0.1",
	}
	for _, s := range nonGlobal {
		if _, _, ok := g.Lookup(addr(s)); ok {
			t.Errorf("Lookup(%s) answered", s)
		}
	}
	if got := metricValue(t, reg, "netmon_geo_lookups_total", "result", "private"); got != float64(len(nonGlobal)) {
		t.Errorf("private lookups %v, want %d", got, len(nonGlobal))
	}
	g.Lookup(addr("8.8.8.8"))
	eventually(t, 5*time.Second, "8.8.8.8 answered", func() bool { _, _, ok := g.Lookup(addr("8.8.8.8")); return ok })
	requests, _ := f.log()
	if diff := cmp.Diff(requests, [][]string{{"8.8.8.8"}}); diff != "" {
		t.Errorf("requests (-got, +want):\n%s", diff)
	}
}

func TestOnlineBackoff(t *testing.T) {
	const backoff = 400 * time.Millisecond
	tests := []struct {
		desc     string
		first    int
		header   http.Header
		wantGap  time.Duration // at least, between the first two requests
		limited  float64
		firstHit bool // the first request's answer is filed
	}{
		{"429 pauses for Backoff and resends the batch", http.StatusTooManyRequests, nil, backoff, 1, false},
		{"X-Rl: 0 pauses for X-Ttl, capped at Backoff", http.StatusOK,
			http.Header{"X-Rl": {"0"}, "X-Ttl": {"60"}}, backoff, 0, true},
		{"X-Rl above 0 does not pause", http.StatusOK, http.Header{"X-Rl": {"3"}, "X-Ttl": {"60"}}, 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			f := newFakeBatch(t)
			f.set("8.8.8.8", "US", "AS15169 Google LLC")
			f.set("1.1.1.1", "AU", "AS13335 Cloudflare, Inc.")
			f.respond = func(n int) (int, http.Header) {
				if n == 0 {
					return tc.first, tc.header
				}
				return http.StatusOK, nil
			}
			cfg := onlineConfig(t, f.url())
			cfg.BatchInterval = 20 * time.Millisecond
			cfg.Backoff = backoff
			g, reg := startGeo(t, cfg)
			g.Lookup(addr("8.8.8.8"))
			eventually(t, 5*time.Second, "first request", func() bool { return f.count() == 1 })
			g.Lookup(addr("1.1.1.1"))
			eventually(t, 5*time.Second, "second request", func() bool { return f.count() == 2 })
			requests, times := f.log()
			if gap := times[1].Sub(times[0]); gap < tc.wantGap-20*time.Millisecond {
				t.Errorf("second request %v after the first, want at least %v", gap, tc.wantGap)
			}
			if tc.wantGap == 0 && times[1].Sub(times[0]) > backoff {
				t.Errorf("second request %v after the first: paused without reason", times[1].Sub(times[0]))
			}
			want := [][]string{{"8.8.8.8"}, {"1.1.1.1"}}
			if !tc.firstHit {
				want[1] = []string{"8.8.8.8", "1.1.1.1"} // resent first, in order
			}
			if diff := cmp.Diff(requests, want); diff != "" {
				t.Errorf("requests (-got, +want):\n%s", diff)
			}
			if got := metricValue(t, reg, "netmon_geo_online_batches_total", "result", "rate_limited"); got != tc.limited {
				t.Errorf("rate_limited batches %v, want %v", got, tc.limited)
			}
			eventually(t, 5*time.Second, "both answered", func() bool {
				_, _, ok1 := g.Lookup(addr("8.8.8.8"))
				_, _, ok2 := g.Lookup(addr("1.1.1.1"))
				return ok1 && ok2
			})
		})
	}
}

func TestOnlineQueueBound(t *testing.T) {
	f := newFakeBatch(t)
	cfg := onlineConfig(t, f.url())
	cfg.BatchInterval = time.Hour // nothing is sent during the test
	cfg.QueueMax = 10
	g, reg := startGeo(t, cfg)
	addrs := publicAddrs(25)
	for _, a := range addrs {
		g.Lookup(a)
	}
	for _, a := range addrs[:10] { // already queued: not dropped again
		g.Lookup(a)
	}
	for _, c := range []struct {
		metric string
		labels []string
		want   float64
	}{
		{"netmon_geo_online_queue_length", nil, 10},
		{"netmon_geo_online_queue_dropped_total", nil, 15},
		{"netmon_geo_lookups_total", []string{"result", "dropped"}, 15},
		{"netmon_geo_lookups_total", []string{"result", "pending"}, 20},
	} {
		if got := metricValue(t, reg, c.metric, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.metric, c.labels, got, c.want)
		}
	}
}

func TestOnlineNegativeAndErrors(t *testing.T) {
	f := newFakeBatch(t)
	f.set("8.8.8.8", "US", "AS15169 Google LLC")
	f.respond = func(n int) (int, http.Header) {
		if n == 2 {
			return http.StatusInternalServerError, nil
		}
		return http.StatusOK, nil
	}
	cfg := onlineConfig(t, f.url())
	cfg.NegativeTTL = 300 * time.Millisecond
	g, reg := startGeo(t, cfg)

	// Request 0: 9.9.9.9 fails ("reserved range") and 8.8.8.8 succeeds.
	// The negative answer is filed after start, so it cannot expire
	// before start+NegativeTTL.
	start := time.Now()
	g.Lookup(addr("9.9.9.9"))
	g.Lookup(addr("8.8.8.8"))
	eventually(t, 5*time.Second, "first batch", func() bool { return f.count() == 1 })
	eventually(t, 5*time.Second, "8.8.8.8 answered", func() bool { _, _, ok := g.Lookup(addr("8.8.8.8")); return ok })
	if _, _, ok := g.Lookup(addr("9.9.9.9")); ok {
		t.Fatal("9.9.9.9 answered")
	}
	g.Lookup(addr("9.9.9.9"))
	waitRounds(t, g, 2)
	if n := f.count(); n != 1 && time.Since(start) < cfg.NegativeTTL {
		t.Fatalf("%d requests while the negative answer is fresh, want 1", n)
	}
	// Request 1: once the negative answer expired, 9.9.9.9 is asked again.
	eventually(t, 5*time.Second, "9.9.9.9 asked again", func() bool {
		g.Lookup(addr("9.9.9.9"))
		return f.count() == 2
	})
	if el := time.Since(start); el < cfg.NegativeTTL {
		t.Errorf("9.9.9.9 asked again %v after its negative answer, want after the %v TTL", el, cfg.NegativeTTL)
	}
	// Request 2 answers 500: nothing cached, the address is asked again
	// when next seen (request 3).
	g.Lookup(addr("1.1.1.1"))
	eventually(t, 5*time.Second, "the failing request", func() bool { return f.count() == 3 })
	eventually(t, 5*time.Second, "the error counted", func() bool {
		return metricValue(t, reg, "netmon_geo_online_batches_total", "result", "error") == 1
	})
	g.Lookup(addr("1.1.1.1"))
	eventually(t, 5*time.Second, "1.1.1.1 asked again", func() bool { return f.count() == 4 })
	requests, _ := f.log()
	if diff := cmp.Diff(requests, [][]string{{"9.9.9.9", "8.8.8.8"}, {"9.9.9.9"}, {"1.1.1.1"}, {"1.1.1.1"}}); diff != "" {
		t.Errorf("requests (-got, +want):\n%s", diff)
	}
	if _, _, ok := g.Lookup(addr("8.8.8.8")); !ok {
		t.Error("8.8.8.8 no longer cached")
	}
}

func TestOnlineCacheBound(t *testing.T) {
	f := newFakeBatch(t)
	addrs := publicAddrs(10)
	for _, a := range addrs {
		f.set(a.String(), "FR", "AS3215 Orange")
	}
	cfg := onlineConfig(t, f.url())
	cfg.CacheMax = 5
	g, reg := startGeo(t, cfg)
	for _, a := range addrs {
		g.Lookup(a)
	}
	eventually(t, 5*time.Second, "the batch", func() bool { return f.count() == 1 })
	eventually(t, 5*time.Second, "answers filed", func() bool { _, _, ok := g.Lookup(addrs[9]); return ok })
	if got := metricValue(t, reg, "netmon_geo_online_cache_entries"); got != 5 {
		t.Errorf("cache entries %v, want 5", got)
	}
	var cached []int
	for i, a := range slices.Backward(addrs) {
		if _, _, ok := g.Lookup(a); ok {
			cached = append(cached, i)
		}
	}
	if diff := cmp.Diff(cached, []int{9, 8, 7, 6, 5}); diff != "" {
		t.Errorf("cached (-got, +want):\n%s", diff)
	}
}

func TestOnlineHostileAnswers(t *testing.T) {
	tests := []struct {
		desc string
		ans  answer
		want Info
	}{
		{"well-formed", answer{Status: "success", CountryCode: "us", AS: "AS15169 Google LLC"}, Info{"US", "AS15169", "Google LLC"}},
		{"bad country", answer{Status: "success", CountryCode: "<script>", AS: "AS1 X"}, Info{ASN: "AS1", Org: "X"}},
		{"bad AS", answer{Status: "success", CountryCode: "DE", AS: "ASx Evil"}, Info{Country: "DE"}},
		{"AS too large", answer{Status: "success", AS: "AS99999999999 Big"}, Info{}},
		{"control characters and invalid UTF-8 in org", answer{Status: "success", AS: "AS2 a\x00b\x1b[31mc\xff"}, Info{ASN: "AS2", Org: "ab[31mc"}},
		{"org from the org field", answer{Status: "success", AS: "AS3", Org: "Three"}, Info{ASN: "AS3", Org: "Three"}},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			if diff := cmp.Diff(tc.ans.info(), tc.want); diff != "" {
				t.Errorf("info (-got, +want):\n%s", diff)
			}
		})
	}
	long := answer{AS: "AS4 " + strings.Repeat("é", 150)} // 300 bytes

	if org := long.info().Org; len(org) != maxOrgLen || !utf8.ValidString(org) {
		t.Errorf("org of %d bytes (valid UTF-8: %v), want %d", len(org), utf8.ValidString(org), maxOrgLen)
	}
}

// TestOnlineYieldsToDatabase: when a database appears, lookups use it
// and the online service is no longer asked, not even for what was
// queued before.
func TestOnlineYieldsToDatabase(t *testing.T) {
	f := newFakeBatch(t)
	cfg := onlineConfig(t, f.url())
	cfg.Dir = t.TempDir()
	cfg.ReloadInterval = 20 * time.Millisecond
	cfg.BatchInterval = time.Hour // flushed by hand below
	g, reg := startGeo(t, cfg)
	if got := g.Source(); got != SourceOnline {
		t.Fatalf("Source() = %q, want online", got)
	}
	g.Lookup(addr("1.1.1.1"))
	copyFixture(t, "maxmind-country.mmdb", cfg.Dir, "country.mmdb")
	eventually(t, 5*time.Second, "the database loaded", func() bool { return g.Source() == SourceMMDB })
	if c, _, ok := g.Lookup(addr("8.8.8.8")); c != "US" || !ok {
		t.Errorf("Lookup(8.8.8.8) = %q, %v; want US from the database", c, ok)
	}
	g.online.flush(t.Context())
	if n := f.count(); n != 0 {
		t.Errorf("%d online requests with a database loaded", n)
	}
	if got := metricValue(t, reg, "netmon_geo_online_queue_length"); got != 0 {
		t.Errorf("queue length %v, want 0", got)
	}
}

// waitRounds waits until g's batcher has finished n more flushes: each
// looked at the queue, so whatever a test queued before has had its
// chance to be sent.
func waitRounds(t *testing.T, g *Geo, n uint64) {
	t.Helper()
	target := g.online.rounds.Load() + n
	eventually(t, 5*time.Second, fmt.Sprintf("%d batcher rounds", n), func() bool { return g.online.rounds.Load() >= target })
}
