package threat

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
	"netmon/store/record"
)

// DefaultPoll is how often a watched file's mtime is checked (issue 18:
// every 2 minutes).
const DefaultPoll = 2 * time.Minute

// Watch keeps the last good load of a file and reloads it when its
// modification time or size changes. A file that cannot be read keeps
// the last good value in force; the failure is logged and shows in
// netmon_threat_file_stale (1) and netmon_threat_file_load_errors_total.
type Watch[T any] struct {
	guard *panics.Guard // a panic in one check: counted, the next check runs
	log   *slog.Logger
	path  string
	poll  time.Duration
	load  func(string) (T, error)
	m     *watchMetrics

	cur     atomic.Pointer[T]
	mu      sync.Mutex
	mtime   time.Time
	size    int64
	loaded  bool
	cancel  context.CancelFunc
	done    chan struct{}
	reloads atomic.Int64
}

type watchMetrics struct {
	errors prometheus.Counter
	stale  prometheus.Gauge
	loads  prometheus.Counter
}

// NewWatch builds a watch of path (kind names it in metrics: "ioc" or
// "category"); it does no I/O. An empty path watches nothing.
func NewWatch[T any](log *slog.Logger, kind, path string, poll time.Duration, load func(string) (T, error), reg prometheus.Registerer) *Watch[T] {
	if poll <= 0 {
		poll = DefaultPoll
	}
	l := prometheus.Labels{"file": kind}
	m := &watchMetrics{
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_threat_file_load_errors_total", ConstLabels: l,
			Help: "Failed loads of a threat or category file; the last good list stays in force."}),
		stale: prometheus.NewGauge(prometheus.GaugeOpts{Name: "netmon_threat_file_stale", ConstLabels: l,
			Help: "1 while the last load of the file failed and an older list (or none) is in force."}),
		loads: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_threat_file_loads_total", ConstLabels: l,
			Help: "Successful loads of a threat or category file."}),
	}
	if reg != nil {
		reg.MustRegister(m.errors, m.stale, m.loads)
	}
	return &Watch[T]{log: log, path: path, poll: poll, load: load, m: m, guard: panics.New(reg, log, "threat")}
}

// Start loads the file once and polls it. A first load that fails is not
// fatal: the hub runs without the list until the file becomes readable.
func (w *Watch[T]) Start() error {
	if w.path == "" {
		return nil
	}
	w.Check()
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan struct{})
	go func() {
		defer close(w.done)
		t := time.NewTicker(w.poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				// A panic in one check (a loader meeting a hostile
				// file) is counted; the list in use stays, the next
				// check runs.
				_ = w.guard.Do(w.Check)
			}
		}
	}()
	return nil
}

// Stop ends the polling.
func (w *Watch[T]) Stop() error {
	if w.cancel != nil {
		w.cancel()
		<-w.done
	}
	return nil
}

// Check reloads the file when its mtime or size changed since the last
// good load (or when no load succeeded yet); the poll loop calls it.
func (w *Watch[T]) Check() {
	if w.path == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st, err := os.Stat(w.path)
	if err == nil && w.loaded && st.ModTime().Equal(w.mtime) && st.Size() == w.size {
		return
	}
	var v T
	if err == nil {
		v, err = w.load(w.path)
	}
	if err != nil {
		w.m.errors.Inc()
		w.m.stale.Set(1)
		w.log.Warn("threat file load failed, keeping the last good list", "path", w.path, "error", err)
		return
	}
	w.cur.Store(&v)
	w.mtime, w.size, w.loaded = st.ModTime(), st.Size(), true
	w.m.stale.Set(0)
	w.m.loads.Inc()
	w.reloads.Add(1)
	w.log.Info("threat file loaded", "path", w.path)
}

// Current is the last good load (the zero T before any).
func (w *Watch[T]) Current() T {
	if p := w.cur.Load(); p != nil {
		return *p
	}
	var zero T
	return zero
}

// Loads counts the successful loads so far.
func (w *Watch[T]) Loads() int64 { return w.reloads.Load() }

// Lists are the current loads of the threat list and the domain
// categories, as the API's lookups read them (nil watches or loads:
// none).
type Lists struct {
	IOCWatch      *Watch[*List]
	CategoryWatch *Watch[*Categories]
}

// IOC returns the threat list in force (nil: none).
func (l Lists) IOC() *List {
	if l.IOCWatch == nil {
		return nil
	}
	return l.IOCWatch.Current()
}

// Categories returns the domain categories in force (nil: none).
func (l Lists) Categories() *Categories {
	if l.CategoryWatch == nil {
		return nil
	}
	return l.CategoryWatch.Current()
}

// MatchName looks a name up in the threat list in force (with parent
// domains): the alert engine's ioc rule reads the lists through it.
func (l Lists) MatchName(name string) (record.IOCHit, bool) {
	h, ok := l.IOC().Match(name)
	return record.IOCHit{Entry: h.Entry, List: h.List, Line: h.Line}, ok
}

// Generation counts the threat list's loads: a reload changes it, so the
// ioc rule judges names already seen again against the new list.
func (l Lists) Generation() int64 {
	if l.IOCWatch == nil {
		return 0
	}
	return l.IOCWatch.Loads()
}
