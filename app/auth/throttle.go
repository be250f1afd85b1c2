package auth

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ThrottleConfig is the failure policy of spec section 5 item 4.
type ThrottleConfig struct {
	// MaxFailures within Window blocks the key.
	MaxFailures int
	// Window is how far back failures count.
	Window time.Duration
	// Block is how long a key stays blocked.
	Block time.Duration
	// FailuresOnly counts only finished failures, not attempts still being
	// evaluated. Enrollment uses it: its check is cheap (no bcrypt), and a
	// site rolling out many agents behind one NAT address enrolls them in
	// parallel; reserving in-flight attempts would refuse all but five.
	FailuresOnly bool
	// MaxKeys caps the memory held for distinct keys; when it is full and
	// no stale entry can be dropped, new keys are refused (counted), which
	// keeps an attack from many addresses from exhausting memory.
	MaxKeys int
}

// DefaultThrottleConfig is 5 failures a minute, then a minute's block.
func DefaultThrottleConfig() ThrottleConfig {
	return ThrottleConfig{MaxFailures: 5, Window: time.Minute, Block: time.Minute, MaxKeys: 100_000}
}

// RetryAfterSeconds is the Retry-After value of every 429 (spec: 60).
const RetryAfterSeconds = 60

// Throttle limits failed attempts per key (a client IP, a username). It is
// shared by login and, later, agent enrollment.
//
// Attempts are reserved before they are evaluated: a key may have at most
// MaxFailures attempts that failed or are still being evaluated, so 50
// parallel wrong passwords from one address lead to at most 5 bcrypt
// checks, the other 45 being refused at once.
type Throttle struct {
	cfg      ThrottleConfig
	now      func() time.Time
	mu       sync.Mutex
	keys     map[string]*throttleEntry
	rejected prometheus.Counter
}

type throttleEntry struct {
	failures     []time.Time // within Window, oldest first
	inflight     int
	blockedUntil time.Time
}

// NewThrottle returns a throttle; its rejections are counted as
// netmon_throttle_rejected_total{throttle=name} on reg (nil: not registered).
func NewThrottle(cfg ThrottleConfig, name string, reg prometheus.Registerer) *Throttle {
	t := &Throttle{cfg: cfg, now: time.Now, keys: map[string]*throttleEntry{}}
	t.rejected = prometheus.NewCounter(prometheus.CounterOpts{
		Name:        "netmon_throttle_rejected_total",
		Help:        "Attempts refused by a failure throttle (429), by throttle.",
		ConstLabels: prometheus.Labels{"throttle": name},
	})
	if reg != nil {
		_ = reg.Register(t.rejected)
	}
	return t
}

// Attempt is a reserved attempt: exactly one of Fail, Succeed or Cancel
// must be called.
type Attempt struct {
	t    *Throttle
	keys []string
	done bool
}

// Begin reserves an attempt for every key (all must be open). ok is false
// when any key is blocked or has no attempt left.
func (t *Throttle) Begin(keys ...string) (a *Attempt, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, k := range keys {
		e := t.keys[k]
		if e == nil {
			continue
		}
		t.prune(e, now)
		pending := e.inflight
		if t.cfg.FailuresOnly {
			pending = 0
		}
		if now.Before(e.blockedUntil) || len(e.failures)+pending >= t.cfg.MaxFailures {
			t.rejected.Inc()
			return nil, false
		}
	}
	for _, k := range keys {
		e := t.keys[k]
		if e == nil {
			if len(t.keys) >= t.cfg.MaxKeys {
				t.sweepLocked(now)
				if len(t.keys) >= t.cfg.MaxKeys {
					t.rejected.Inc()
					return nil, false
				}
			}
			e = &throttleEntry{}
			t.keys[k] = e
		}
		e.inflight++
	}
	return &Attempt{t: t, keys: keys}, true
}

// Admit reserves an attempt for key as enrollment asks (enroll.Limiter):
// done(true) records a success, done(false) a failure; ok is false when
// the key is blocked.
func (t *Throttle) Admit(key string) (done func(success bool), ok bool) {
	a, ok := t.Begin(key)
	if !ok {
		return nil, false
	}
	return func(success bool) {
		if success {
			a.Succeed()
		} else {
			a.Fail()
		}
	}, true
}

// Fail records a failed attempt; the key that reaches MaxFailures is blocked.
func (a *Attempt) Fail() { a.finish(false, true) }

// Succeed resets the keys' failures.
func (a *Attempt) Succeed() { a.finish(true, false) }

// Cancel releases the reservation without counting it (a malformed
// request that never reached a credential check).
func (a *Attempt) Cancel() { a.finish(false, false) }

func (a *Attempt) finish(success, failure bool) {
	if a == nil || a.done {
		return
	}
	a.done = true
	t := a.t
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, k := range a.keys {
		e := t.keys[k]
		if e == nil {
			continue
		}
		e.inflight--
		switch {
		case success:
			e.failures = nil
		case failure:
			t.prune(e, now)
			e.failures = append(e.failures, now)
			if len(e.failures) >= t.cfg.MaxFailures {
				e.blockedUntil = now.Add(t.cfg.Block)
				e.failures = nil
			}
		}
		if e.inflight == 0 && len(e.failures) == 0 && !now.Before(e.blockedUntil) {
			delete(t.keys, k)
		}
	}
}

// prune drops failures older than the window.
func (t *Throttle) prune(e *throttleEntry, now time.Time) {
	e.failures = within(e.failures, now, t.cfg.Window)
}

// within drops the times (oldest first) that are window or more before now.
func within(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	cut := 0
	for cut < len(ts) && now.Sub(ts[cut]) >= window {
		cut++
	}
	return ts[cut:]
}

func (t *Throttle) sweepLocked(now time.Time) {
	for k, e := range t.keys {
		t.prune(e, now)
		if e.inflight == 0 && len(e.failures) == 0 && !now.Before(e.blockedUntil) {
			delete(t.keys, k)
		}
	}
}

// Sweep drops entries with nothing left to remember; the auth service runs
// it periodically.
func (t *Throttle) Sweep() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(t.now())
}

// Failures is how many failures key has within the window (a blocked
// key counts as MaxFailures).
func (t *Throttle) Failures(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.keys[key]
	if e == nil {
		return 0
	}
	if t.now().Before(e.blockedUntil) {
		return t.cfg.MaxFailures
	}
	t.prune(e, t.now())
	return len(e.failures)
}

// Len is the number of keys tracked (for tests and metrics).
func (t *Throttle) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.keys)
}
