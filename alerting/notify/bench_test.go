package notify

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store/storetest"
)

// BenchmarkBurst: 10 000 alert events routed to 3 channels on SQLite,
// one receiver slow (2 s per request). Reported: the longest Offer (what
// the engine's evaluation cycle pays per event: it must never wait), the
// time until both fast channels have every event delivered (target
// under 5 s), and the heap growth (bounded: the queue is the database,
// not memory). The slow channel goes on in the background; it holds only
// its own senders.
func BenchmarkBurst(b *testing.B) {
	const events = 10000
	fast := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
		w.WriteHeader(200)
	})
	f1, f2, s := httptest.NewServer(fast), httptest.NewServer(fast), httptest.NewServer(slow)
	defer f1.Close()
	defer f2.Close()
	defer s.Close()
	for i := 0; i < b.N; i++ {
		db := storetest.OpenSQLite(b)
		box := newBox(Settings{GenericURL: f1.URL + "/a", Chatapp1URL: f2.URL + "/b", Chatapp2URL: s.URL + "/slow"})
		cfg := DefaultConfig()
		cfg.Poll = 100 * time.Millisecond
		cfg.RateBurst = -1 // the burst measures delivery, not the rate limit
		n := New(storetest.Logger(b), cfg, Deps{Store: db, Settings: box.get, Guard: loopGuard}, nil)
		if err := n.Start(); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		var worst time.Duration
		for id := int64(1); id <= events; id++ {
			ev := portEvent
			ev.ID = id
			t0 := time.Now()
			if !n.Offer(ev) {
				b.Fatalf("event %d dropped", id)
			}
			worst = max(worst, time.Since(t0))
		}
		deadline := start.Add(60 * time.Second)
		for {
			a := testutil.ToFloat64(n.m.results.WithLabelValues(GenericURL, "delivered"))
			c := testutil.ToFloat64(n.m.results.WithLabelValues(Chatapp1, "delivered"))
			if a == events && c == events {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("fast channels delivered %v and %v of %d in 60 s", a, c, events)
			}
			time.Sleep(20 * time.Millisecond)
		}
		fastDone := time.Since(start)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		routed := testutil.ToFloat64(n.m.routed.WithLabelValues(Chatapp2))
		slowDone := testutil.ToFloat64(n.m.results.WithLabelValues(Chatapp2, "delivered"))
		_ = n.Stop()
		b.ReportMetric(float64(worst.Microseconds()), "offer_max_µs")
		b.ReportMetric(fastDone.Seconds(), "fast_done_s")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap_growth_MiB")
		b.ReportMetric(slowDone, "slow_delivered")
		if routed != events {
			b.Errorf("slow channel routed %v, want %d", routed, events)
		}
	}
}
