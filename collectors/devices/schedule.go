package devices

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"time"

	"netmon/store/record"
)

// interval is a device's poll interval: poll_seconds (the default when
// unset), never under its driver's MinInterval.
func (c *Component) interval(d record.Device, drv Driver) time.Duration {
	s := d.PollSeconds
	if s <= 0 {
		s = c.cfg.DefaultPollSeconds
	}
	return max(time.Duration(s)*time.Second, drv.Limits().MinInterval)
}

// maxBackoff is the cap of a failing device's wait: its driver's, else
// the component's.
func (c *Component) maxBackoff(drv Driver) time.Duration {
	if b := drv.Limits().MaxBackoff; b > 0 {
		return b
	}
	return c.cfg.MaxBackoff
}

// phase is where in its interval a device is first polled: drawn from
// its id, so the polls of many devices spread evenly and stay put across
// restarts.
func (c *Component) phase(d record.Device, drv Driver) time.Duration {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(d.ID >> (8 * i))
	}
	h.Write(b[:])
	return time.Duration(h.Sum64() % uint64(c.interval(d, drv)))
}

func (c *Component) run(ctx context.Context) {
	defer close(c.done)
	work := make(chan *devState)
	var wg sync.WaitGroup
	for range c.cfg.Concurrency {
		wg.Go(func() {
			for st := range work {
				// pollDevice recovers a panic of the poll into the
				// device's last_error; this keeps the worker whatever else.
				_ = c.loop.Do(func() { c.pollDevice(ctx, st) })
			}
		})
	}
	defer c.closeSessions() // after the workers are done
	defer wg.Wait()
	defer close(work)
	// A panic in the schedule restarts it; the devices are the Component's.
	c.loop.Keep(ctx.Done(), func() { c.schedule(ctx, work) })
}

func (c *Component) schedule(ctx context.Context, work chan<- *devState) {
	if err := c.refresh(ctx); err != nil {
		c.log.Warn("read devices", "error", err)
	}
	refresh := time.NewTicker(c.cfg.Refresh)
	defer refresh.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-refresh.C:
			if err := c.refresh(ctx); err != nil {
				c.log.Warn("read devices", "error", err)
			}
		case <-tick.C:
			// One replica polls (the leader when several hubs share a
			// database): the others keep the schedule and poll nothing.
			if c.deps.IsLeader != nil && !c.deps.IsLeader() {
				continue
			}
			for _, st := range c.due() {
				select {
				case work <- st:
				case <-ctx.Done():
					c.release(st)
					return
				}
			}
		}
	}
}

// hostKey is the address a device's polls go to (perHost's key).
func hostKey(d record.Device) string {
	if d.APIURL != "" {
		return d.APIURL
	}
	return d.Host
}

// due marks and returns the devices whose time has come.
func (c *Component) due() []*devState {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*devState
	for _, st := range c.devices {
		if !st.running && !now.Before(st.next) && c.perHost[hostKey(st.dev)] < c.cfg.PerHost {
			c.claim(st)
			if now.Sub(st.next) > c.interval(st.dev, st.drv) {
				c.m.late.WithLabelValues(st.drv.Name()).Inc()
			}
			out = append(out, st)
		}
	}
	return out
}

// claim marks st running (mu held).
func (c *Component) claim(st *devState) {
	st.running = true
	st.host = hostKey(st.dev)
	c.perHost[st.host]++
}

// release undoes claim for a device that was not polled.
func (c *Component) release(st *devState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unclaim(st)
}

// unclaim ends st's poll (mu held).
func (c *Component) unclaim(st *devState) {
	st.running = false
	if c.perHost[st.host]--; c.perHost[st.host] <= 0 {
		delete(c.perHost, st.host)
	}
	if st.gone && st.sess != nil {
		st.sess.Close()
		st.sess = nil
	}
}

// PollDevice polls one scheduled device now, records the poll and
// schedules the next one (tests and an operator's "poll now"); false
// when the device is not scheduled (unknown, disabled, -poller=false)
// or already polling.
func (c *Component) PollDevice(ctx context.Context, id int64) bool {
	c.mu.Lock()
	st := c.devices[id]
	if st == nil || st.running {
		c.mu.Unlock()
		return false
	}
	c.claim(st)
	c.mu.Unlock()
	c.pollDevice(ctx, st)
	return true
}

// pollDevice polls one claimed device, writes the result and schedules
// the next poll: one interval after this one was due (keeping its
// phase), or after the backoff when it failed. A panic in the poll is
// the device's error, counted under its driver's name; its session
// starts anew. A poll cut by Stop is neither recorded nor a failure.
func (c *Component) pollDevice(ctx context.Context, st *devState) {
	c.mu.Lock()
	dev, drv, due := st.dev, st.drv, st.next
	if st.sess == nil {
		st.sess = drv.Open()
	}
	sess := st.sess
	c.mu.Unlock()

	name := drv.Name()
	start := c.now()
	began := time.Now() // the duration on the monotonic clock, not c.now
	var (
		res record.DevicePoll
		err error
	)
	panicked := c.guards[name].Do(func() { res, err = sess.Poll(ctx, dev) })
	if panicked != nil {
		res, err = record.DevicePoll{DeviceID: dev.ID, TS: start.Unix(), Err: panicked.Error()}, panicked
	}
	if err != nil && res.Err == "" {
		res.Err = err.Error()
	}
	res.DeviceID = dev.ID
	stopping := errors.Is(ctx.Err(), context.Canceled)
	if !stopping {
		c.m.duration.WithLabelValues(name).Observe(time.Since(began).Seconds())
		result := "ok"
		if err != nil {
			result = "error"
		}
		c.m.polls.WithLabelValues(name, result).Inc()
		if werr := c.deps.Store.SaveDevicePoll(ctx, res); werr != nil {
			c.log.Warn("save device poll", "device", dev.ID, "driver", name, "error", werr)
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if panicked != nil || stopping {
		st.gone = true // a session in an unknown state, or the end: closed below
	}
	c.unclaim(st)
	st.gone = st.gone && c.devices[dev.ID] != st
	if stopping || c.devices[dev.ID] != st {
		return
	}
	iv := c.interval(dev, drv)
	now := c.now()
	if err != nil {
		st.failures++
		back := iv << min(st.failures-1, 16)
		st.next = now.Add(min(back, max(c.maxBackoff(drv), iv)))
		return
	}
	st.failures = 0
	st.latest, st.latestAt = &res, now
	st.next = due.Add(iv)
	if st.next.Before(now) {
		st.next = now.Add(iv / 10) // behind: catch up soon, not in a burst
	}
}

// closeSessions closes every kept session (stopped: no poll in flight).
func (c *Component) closeSessions() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.devices {
		if st.sess != nil {
			st.sess.Close()
			st.sess = nil
		}
	}
}

// State is a device's schedule as the component sees it (tests).
type State struct {
	Next     time.Time
	Failures int
	Driver   string
}

// DeviceState returns a device's schedule; false when not scheduled.
func (c *Component) DeviceState(id int64) (State, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.devices[id]
	if !ok {
		return State{}, false
	}
	return State{Next: st.next, Failures: st.failures, Driver: st.drv.Name()}, true
}
