package notify

import (
	"context"
	"slices"
	"sync"

	"netmon/store/record"
)

// Tickets per alert group (issue 19): a group is the incident an event
// first joined (its group_id, set by the correlator through
// store.UpsertIncident); an event in no incident is a group of its own.
// The group's first routed member opens one ticket, whose reference every
// member holds as ext_ref (members joining later adopt it); the group
// resolving (the incident resolved or closed, or the lone event
// resolved) closes it.

// groupEnd is an alert group that resolved at ts.
type groupEnd struct {
	id, ts int64
}

// GroupResolved hands over the end of alert group id (an incident that
// was resolved or closed) without blocking: every ticket its members
// hold is closed. False: the queue was full (dropped and counted).
func (n *Notifier) GroupResolved(id, ts int64) bool {
	select {
	case n.groupEnds <- groupEnd{id, ts}:
		return true
	default:
		n.m.dropped.WithLabelValues(DropGroupQueue).Inc()
		return false
	}
}

// closeGroup stores one pending ticket close per distinct reference the
// group's members hold (one, unless members had tickets of their own
// before the correlator grouped them).
func (n *Notifier) closeGroup(ctx context.Context, g groupEnd) {
	if !slices.Contains(n.dep.Settings().Enabled(), Ticket) {
		return
	}
	holders, err := n.dep.Store.GroupTicketHolders(ctx, g.id)
	if err != nil {
		n.m.storeError.Inc()
		n.log.Warn("read alert group tickets", "group", g.id, "error", err)
		return
	}
	now := n.now().Unix()
	ds := make([]record.AlertDelivery, 0, len(holders))
	for _, ev := range holders {
		ev.State, ev.ResolvedTS = record.AlertResolved, g.ts
		ds = append(ds, record.AlertDelivery{EventID: ev.ID, Channel: Ticket, Route: "group-resolved", Status: record.DeliveryPending,
			CreatedTS: now, NextTS: now, UpdatedTS: now, Event: ev})
	}
	n.store(ctx, ds, 0)
}

// keyedLocks is a mutex per key, dropped when unused.
type keyedLocks struct {
	mu sync.Mutex
	m  map[int64]*keyLock
}

type keyLock struct {
	sync.Mutex
	refs int
}

// lock takes key's mutex and returns its release.
func (k *keyedLocks) lock(key int64) func() {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[int64]*keyLock{}
	}
	l := k.m[key]
	if l == nil {
		l = &keyLock{}
		k.m[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
