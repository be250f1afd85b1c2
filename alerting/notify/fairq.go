package notify

import (
	"strconv"
	"sync"

	"netmon/store/record"
)

// fairQueue is the bounded intake between the engine and the router
// (RELIABILITY case 35). A plain channel let one agent's storm fill all
// its slots: the 10 000-slot queue dropped the rest, including another
// agent's severity-8 alert. Here every source (an agent and a rule kind:
// sourceOf) has its own FIFO per severity; take serves the sources in
// turn, highest severity first within each; and when the queue is full
// the room is made at the expense of the source holding the most:
//
//   - a new event of another source evicts that largest source's lowest
//     severity, newest event (reason fair_share);
//   - a new event of the largest source itself evicts one of its own
//     queued events of lower severity, or is dropped (reason
//     source_share).
//
// So a storm never displaces another source's event nor a higher
// severity of its own. Every eviction and drop is counted by reason.
type fairQueue struct {
	mu    sync.Mutex
	limit int
	n     int
	srcs  map[string]*sourceQueue
	// ring is the sources holding events, in turn order; next is the
	// turn of the next take.
	ring []string
	next int
	// ready has a token while events are queued (the intake waits on it).
	ready chan struct{}
}

// sourceQueue is one source's events by severity (0-10), oldest first.
type sourceQueue struct {
	bySev [11][]record.AlertEvent
	n     int
}

// Reasons of netmon_notify_dropped_total.
const (
	DropFairShare   = "fair_share"   // evicted: the queue was full and this event's source held the most
	DropSourceShare = "source_share" // the queue was full and the event's own source held the most
	DropStoreError  = "store_error"  // its deliveries could not be stored
	DropGroupQueue  = "group_queue"  // a group end did not fit its queue
	DropPanic       = "panic"        // the routing pass that held it panicked
)

func newFairQueue(limit int) *fairQueue {
	return &fairQueue{limit: max(limit, 1), srcs: map[string]*sourceQueue{}, ready: make(chan struct{}, 1)}
}

// sourceOf is the fairness unit: the agent (0: the hub) and the rule.
func sourceOf(ev record.AlertEvent) string {
	return strconv.FormatInt(ev.AgentID, 10) + "|" + ev.Kind
}

func sevIndex(s int) int { return min(max(s, 0), 10) }

// push queues ev. It returns whether ev was queued and the reason of the
// event dropped to make it fit ("" when none was).
func (q *fairQueue) push(ev record.AlertEvent) (queued bool, dropped string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := sourceOf(ev)
	if q.n >= q.limit {
		big := q.largest()
		own := q.srcs[key]
		if own != nil && own.n >= q.srcs[big].n {
			big = key
		}
		if big == key {
			// The storm's own event: it may only displace a lower
			// severity of its own.
			if own == nil || !own.evictBelow(sevIndex(ev.Severity)) {
				return false, DropSourceShare
			}
			dropped = DropSourceShare
		} else {
			q.srcs[big].evictBelow(11)
			dropped = DropFairShare
		}
		q.n--
		q.forgetEmpty()
	}
	s := q.srcs[key]
	if s == nil {
		s = &sourceQueue{}
		q.srcs[key] = s
		q.ring = append(q.ring, key)
	}
	i := sevIndex(ev.Severity)
	s.bySev[i] = append(s.bySev[i], ev)
	s.n++
	q.n++
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true, dropped
}

// largest is the source holding the most events (the queue is full, so
// there is one). O(sources): a storm is few sources.
func (q *fairQueue) largest() string {
	best, bestN := "", -1
	for _, k := range q.ring {
		if n := q.srcs[k].n; n > bestN {
			best, bestN = k, n
		}
	}
	return best
}

// evictBelow drops the newest event of the lowest severity under sev;
// false when there is none.
func (s *sourceQueue) evictBelow(sev int) bool {
	for i := 0; i < sev && i < len(s.bySev); i++ {
		if l := len(s.bySev[i]); l > 0 {
			s.bySev[i] = s.bySev[i][:l-1]
			s.n--
			return true
		}
	}
	return false
}

// forgetEmpty removes the sources left empty from the ring.
func (q *fairQueue) forgetEmpty() {
	out := q.ring[:0]
	for i, k := range q.ring {
		if q.srcs[k].n > 0 {
			out = append(out, k)
			continue
		}
		delete(q.srcs, k)
		if i < q.next {
			q.next--
		}
	}
	q.ring = out
	if q.next >= len(q.ring) {
		q.next = 0
	}
}

// take appends up to max events to batch, one per source in turn (each
// source's highest severity, oldest first).
func (q *fairQueue) take(batch []record.AlertEvent, max int) []record.AlertEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	emptied := false
	for len(batch) < max && q.n > 0 {
		if q.next >= len(q.ring) {
			q.next = 0
		}
		s := q.srcs[q.ring[q.next]]
		for i := len(s.bySev) - 1; i >= 0; i-- {
			if len(s.bySev[i]) > 0 {
				batch = append(batch, s.bySev[i][0])
				s.bySev[i][0] = record.AlertEvent{}
				s.bySev[i] = s.bySev[i][1:]
				s.n--
				q.n--
				break
			}
		}
		emptied = emptied || s.n == 0
		q.next++
	}
	if emptied {
		q.forgetEmpty()
	}
	if q.n > 0 {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return batch
}

// len is how many events are queued.
func (q *fairQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}
