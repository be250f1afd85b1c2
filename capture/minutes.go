package capture

import (
	"context"
	"time"

	"netmon/store/record"
)

// pendingMinutes are finished minutes collected under the lock and written
// after it is released, so a slow database never stalls a snapshot.
type pendingMinutes struct {
	minutes []record.TrafficMinute
	remoteT int64
	remotes []record.RemoteTraffic
}

// flush writes the minutes that have ended; final also writes the current,
// partial one (capture stopping).
func (c *Capture) flush(final bool) {
	c.mu.Lock()
	p := c.collectLocked(final)
	c.mu.Unlock()
	c.write(p)
}

// collectLocked gathers the minutes after c.flushed that are complete (or,
// with final, every minute up to now) from the engine.
func (c *Capture) collectLocked(final bool) pendingMinutes {
	var p pendingMinutes
	e := c.engine
	if e == nil || c.deps.Minutes == nil {
		return p
	}
	now := c.deps.Now()
	last := now.Truncate(time.Minute).Unix() - 60 // the last complete minute
	if final {
		last += 60
	}
	end := now
	if !c.running && !c.stoppedAt.IsZero() {
		end = c.stoppedAt
	}
	for m := c.flushed + 60; m <= last; m += 60 {
		ms, ok := e.Minute(m)
		covered := overlap(m, m+60, c.startedAt.Unix(), end.Unix())
		if !ok && covered == 0 {
			continue
		}
		p.minutes = append(p.minutes, record.TrafficMinute{
			TS: m, InBytes: ms.In, OutBytes: ms.Out, LocalBytes: ms.Local, Packets: ms.Packets,
			PeakIn: ms.PeakIn, PeakOut: ms.PeakOut, Seconds: max(covered, ms.Seconds),
		})
	}
	if last > c.flushed {
		c.flushed = last
	}
	// The kernel's drops since the last flush go into the last minute
	// written (the source counts them, not per minute): the SLA metric
	// packet_drop sums them over a window, so a drop lands at most a
	// flush late. Drops with no minute to write wait for the next one.
	if n := len(p.minutes); n > 0 && c.src != nil {
		if st, err := c.src.Stats(); err == nil && st.Dropped > c.dropsFlushed {
			p.minutes[n-1].Dropped = int64(st.Dropped - c.dropsFlushed)
			c.dropsFlushed = st.Dropped
		}
	}
	if len(p.minutes) > 0 {
		p.remoteT = p.minutes[len(p.minutes)-1].TS
		for ip, b := range e.TakeRemoteMinute() {
			r := record.RemoteTraffic{IP: ip, Bytes: b}
			if c.deps.Enrich != nil {
				r.Country, _, _ = c.deps.Enrich.Lookup(ip)
			}
			p.remotes = append(p.remotes, r)
		}
	}
	return p
}

func (c *Capture) write(p pendingMinutes) {
	if len(p.minutes) == 0 || c.deps.Minutes == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range p.minutes {
		if err := c.deps.Minutes.AddTrafficMinute(ctx, m); err != nil {
			c.log.Warn("history minute not written", "ts", m.TS, "error", err)
		}
	}
	if err := c.deps.Minutes.AddRemoteMinute(ctx, p.remoteT, p.remotes); err != nil {
		c.log.Warn("remote minute not written", "ts", p.remoteT, "error", err)
	}
}

// overlap is the number of seconds [a1,a2) and [b1,b2) share.
func overlap(a1, a2, b1, b2 int64) int64 {
	lo, hi := max(a1, b1), min(a2, b2)
	if hi <= lo {
		return 0
	}
	return hi - lo
}
