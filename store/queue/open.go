package queue

import (
	"context"
	"slices"
	"sync"
	"time"

	"netmon/store/flowagg"
)

// The open flow minutes, readable (issue 28). A flow is summed into its
// exporter's open minute and written when the minute closes, 60 to 65 s
// after it began: read from the tables alone, a flow showed up 40 to 60 s
// late. The flow reads now add the minutes not written yet to the stored
// ones (store.DB.TopFlows and the conversations take them).
//
// Why merge on read rather than write partial minutes every few seconds
// with upsert-add: at 10^6 distinct 5-tuples a minute the write path is
// cheap because each exporter minute is written once, as a bounded set of
// appended rows (flowagg keeps MinuteRows in detail, the rest in other
// rows). Flushing every 5 s would write every minute twelve times; an
// upsert needs a unique index on the 5-tuple columns (an index write per
// row, on the tables that hold millions of rows a day) and its partial
// top-N would not be the closed minute's (a 5-tuple summed into "other"
// in one flush and in detail in the next). Reading costs nothing while
// nobody looks: a summary of the open minutes (one pass over their keys,
// tens of milliseconds at a million) is made on demand by the writer that
// owns them, at most about twice per OpenMaxAge however many readers ask,
// and a reader finding one less than OpenMaxAge old answers with it at
// once (asking for the next without waiting).
//
// Exact totals: a minute is either open (in a writer's summary), being
// written (kept aside until its transaction commits) or stored. A read
// takes the summaries and the minutes being written, then reads the
// tables; if a write began or ended in between (the minute may be in both
// or in neither), it reads again (liveState.begun/ended, a sequence lock).

// liveState is what the readers see of the writers' minutes not written.
type liveState struct {
	mu sync.Mutex
	// peek and peekAt: each writer's summary of its open minutes and
	// when it was made (zero: none, or stale since minutes closed).
	peek   [][]flowagg.Minute
	peekAt []time.Time
	// asking: a request for a summary is out, nobody waiting on it.
	asking []bool
	// writing holds each writer's minutes whose write is under way.
	writing [][]flowagg.Minute
	// begun and ended count the writes of closed minutes: equal when none
	// is under way, and a read that saw them equal before and begun
	// unchanged after saw every minute exactly once.
	begun, ended uint64
	// refresh lets one reader at a time ask the writers for summaries.
	refresh sync.Mutex
}

func (l *liveState) init(workers int) {
	l.peek = make([][]flowagg.Minute, workers)
	l.peekAt = make([]time.Time, workers)
	l.asking = make([]bool, workers)
	l.writing = make([][]flowagg.Minute, workers)
}

// begin marks ms as being written by writer w: they left the writer's
// open minutes, so its summary is stale.
func (l *liveState) begin(w int, ms []flowagg.Minute) {
	l.mu.Lock()
	l.begun++
	l.writing[w] = ms
	l.peek[w], l.peekAt[w] = nil, time.Time{}
	l.mu.Unlock()
}

// end marks writer w's write done: its minutes are committed or dropped.
func (l *liveState) end(w int) {
	l.mu.Lock()
	l.writing[w] = nil
	l.ended++
	l.mu.Unlock()
}

func (l *liveState) setPeek(w int, ms []flowagg.Minute, at time.Time) {
	l.mu.Lock()
	l.peek[w], l.peekAt[w] = ms, at
	l.asking[w] = false
	l.mu.Unlock()
}

// stale lists the writers whose summary is missing or older than age
// (wait: the read asks and waits), and those whose summary is older than
// half of it, with no request out yet (ask: the read asks without
// waiting, so that the next one finds a fresh summary; a reader rarely
// waits for a pass over a million keys).
func (l *liveState) stale(now time.Time, age time.Duration) (wait, ask []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for w, at := range l.peekAt {
		switch {
		case at.IsZero() || now.Sub(at) > age:
			wait = append(wait, w)
		case now.Sub(at) > age/2 && !l.asking[w]:
			l.asking[w] = true
			ask = append(ask, w)
		}
	}
	return wait, ask
}

// snapshot returns every minute not written and the write counts;
// complete is false when a writer's summary was dropped by a write since
// the readers asked for it (its open minutes are then missing).
func (l *liveState) snapshot() (ms []flowagg.Minute, begun, ended uint64, complete bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	complete = true
	for w := range l.peek {
		complete = complete && !l.peekAt[w].IsZero()
		ms = append(ms, l.peek[w]...)
		ms = append(ms, l.writing[w]...)
	}
	return ms, l.begun, l.ended, complete
}

func (l *liveState) begunCount() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.begun
}

// ReadOpenFlows calls read with the flow minutes not written yet (each
// writer's open minutes as of at most Config.OpenMaxAge ago, and those
// being written) so that read can add them to what it reads from the
// tables; it calls it again when a write began meanwhile, so that no
// minute is counted twice or missed. After Stop (everything is written)
// read gets none.
func (q *Channel) ReadOpenFlows(ctx context.Context, read func(open []flowagg.Minute) error) error {
	giveUp := time.Now().Add(q.cfg.OpenWait)
	for {
		select {
		case <-q.workersDone:
			return read(nil) // stopped: everything is written
		default:
		}
		late := !time.Now().Before(giveUp)
		if !late {
			if err := q.refreshPeeks(ctx, giveUp); err != nil {
				return err
			}
		}
		ms, begun, ended, complete := q.live.snapshot()
		if !late && (begun != ended || !complete) {
			// A write is under way, or ended since the summaries.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		if begun != ended {
			ms = q.openOnly()
		}
		slices.SortFunc(ms, func(x, y flowagg.Minute) int { return int(x.TS - y.TS) })
		if err := read(ms); err != nil {
			return err
		}
		if late || q.live.begunCount() == begun {
			return nil
		}
		q.rereads.Inc()
	}
}

// openOnly is the writers' summaries without the minutes being written.
func (q *Channel) openOnly() []flowagg.Minute {
	q.live.mu.Lock()
	defer q.live.mu.Unlock()
	var ms []flowagg.Minute
	for _, p := range q.live.peek {
		ms = append(ms, p...)
	}
	return ms
}

// refreshPeeks asks the writers whose summary is older than OpenMaxAge
// for a new one and waits for them, until giveUp at the latest; those
// whose summary is older than half of it are asked without waiting.
func (q *Channel) refreshPeeks(ctx context.Context, giveUp time.Time) error {
	q.live.refresh.Lock()
	defer q.live.refresh.Unlock()
	timeout := time.NewTimer(time.Until(giveUp))
	defer timeout.Stop()
	wait, ask := q.live.stale(time.Now(), q.cfg.OpenMaxAge)
	for _, w := range ask {
		go func() {
			select {
			case q.peekReq[w] <- make(chan struct{}):
			case <-q.workersDone:
			}
		}()
	}
	var waits []chan struct{}
	for _, w := range wait {
		done := make(chan struct{})
		select {
		case q.peekReq[w] <- done:
			waits = append(waits, done)
		case <-q.workersDone:
			return nil // stopped: everything is written
		case <-timeout.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, done := range waits {
		select {
		case <-done:
		case <-q.workersDone:
			return nil
		case <-timeout.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
