package agentmode

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"netmon/agentmode/spool"
	"netmon/agentmode/state"
	"netmon/agentmode/wire"
)

// produceLoop takes a batch at once and then every interval, whatever
// the hub does: an unreachable hub delays sending, never collection.
func (a *Agent) produceLoop(ctx context.Context) {
	for {
		if ctx.Err() != nil {
			return
		}
		taken := a.clock.Now()
		a.produce(ctx)
	wait:
		for {
			// The wait is recomputed when the hub changes the interval:
			// the first batch is taken before the hello's answer, and a
			// 30 s wait begun then must not hold back a 1 s interval.
			d := max(a.intervalDuration()-a.clock.Now().Sub(taken), 0)
			select {
			case <-ctx.Done():
				return
			case <-a.intervalChanged:
			case <-a.clock.After(d):
				break wait
			}
		}
	}
}

// produce takes one batch, gives it the next seq and queues it in memory
// for the sender.
func (a *Agent) produce(ctx context.Context) {
	taken := a.clock.Now()
	b := a.source.Collect(ctx)
	if ctx.Err() != nil {
		return
	}
	var seq uint64
	if err := a.store.Update(func(s *state.State) { seq = s.NextSeq; s.NextSeq++ }); err != nil {
		// The seq is taken in memory all the same; a restart could reuse
		// it, and the hub would then ignore that one batch.
		a.log.Error("cannot save the state file", "err", err)
	}
	b.Seq, b.TS, b.Version = seq, taken.Unix(), a.cfg.Version
	a.fit(&b)

	a.mu.Lock()
	a.mem = append(a.mem, b)
	over := len(a.mem) - spool.Max
	if over > 0 {
		// Only when the sender is stuck in one call for a long time:
		// memory is bounded like the queue, oldest dropped first.
		a.mem = append([]wire.Telemetry(nil), a.mem[over:]...)
	}
	a.mu.Unlock()
	if over > 0 {
		a.log.Warn("too many batches waiting in memory: oldest dropped", "dropped", over)
		a.addDropped(over)
	}
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// fit keeps a batch within the hub's limits (413 beyond them) by trimming
// what grows with the host's load: first the connection inventory to
// wire.MaxConnections entries, keeping the live sockets (listening and
// established) before those winding down; then, while the body is over
// wire.MaxTelemetryBytes, the connections by halves and the
// deep-collection sections (kept sorted most traffic first, so the tail
// cut is the least traffic).
func (a *Agent) fit(b *wire.Telemetry) {
	if n := len(b.Connections); n > wire.MaxConnections {
		slices.SortStableFunc(b.Connections, func(x, y wire.Connection) int {
			return cmp.Compare(connRank(x.Status), connRank(y.Status))
		})
		b.Connections = b.Connections[:wire.MaxConnections]
		a.log.Warn("more sockets than a batch carries: connection list truncated",
			"connections", n, "connections_kept", wire.MaxConnections)
	}
	// Room for the dropped count the sender sets later.
	const limit = wire.MaxTelemetryBytes - 1024
	for {
		raw, err := json.Marshal(b)
		if err != nil || len(raw) <= limit {
			return
		}
		switch {
		case len(b.Connections) > 0:
			b.Connections = b.Connections[:len(b.Connections)/2]
		case len(b.DNS) > 0:
			b.DNS = b.DNS[:len(b.DNS)/2]
		case len(b.L7) > 0:
			b.L7 = b.L7[:len(b.L7)/2]
		case len(b.Processes) > 0:
			b.Processes = b.Processes[:len(b.Processes)/2]
		default:
			return
		}
		a.log.Warn("telemetry batch over the hub's size limit: truncated",
			"bytes", len(raw), "limit", limit, "connections_kept", len(b.Connections),
			"processes_kept", len(b.Processes), "l7_kept", len(b.L7), "dns_kept", len(b.DNS))
	}
}

// connRank orders sockets by what an operator looks for first: listening
// and established ones, then the rest, then those winding down.
func connRank(status string) int {
	switch status {
	case "LISTEN", "ESTABLISHED":
		return 0
	case "TIME_WAIT", "CLOSE_WAIT", "FIN_WAIT1", "FIN_WAIT2", "LAST_ACK", "CLOSING", "CLOSE":
		return 2
	}
	return 1
}

// addDropped adds n discarded batches to the count that the next sent
// batch reports to the hub.
func (a *Agent) addDropped(n int) {
	if n <= 0 {
		return
	}
	if err := a.store.Update(func(s *state.State) { s.Dropped += uint64(n) }); err != nil {
		a.log.Error("cannot save the state file", "err", err)
	}
}
