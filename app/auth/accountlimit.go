package auth

import (
	"sync"
	"time"

	"netmon/app/errs"
)

// AccountLimitConfig is the per-username part of the login throttle.
type AccountLimitConfig struct {
	// MaxFailures within Window put an account under attack.
	MaxFailures int
	// Window is how far back failures count.
	Window time.Duration
	// Interval is how often an account under attack may be tried from an
	// address with no recent failures.
	Interval time.Duration
	// MaxKeys caps the accounts remembered (attackers choose the names).
	MaxKeys int
}

// DefaultAccountLimitConfig: 5 failures a minute, then one attempt every
// 2 s from clean addresses.
func DefaultAccountLimitConfig() AccountLimitConfig {
	return AccountLimitConfig{MaxFailures: 5, Window: time.Minute, Interval: 2 * time.Second, MaxKeys: 100_000}
}

// accountLimit slows guessing at one account from many addresses without
// letting an attacker lock its owner out. An account with MaxFailures
// failures in Window (from anywhere) is under attack: addresses that have
// failed recently may not try it until the failures age out, and every
// other address may try it once per Interval between them — the owner,
// signing in from a clean address, waits at most a couple of seconds
// instead of a minute. Unknown names are tracked the same way, so the
// limit tells nothing about which accounts exist.
type accountLimit struct {
	cfg AccountLimitConfig
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*accountEntry
}

type accountEntry struct {
	failures []time.Time // within Window, oldest first
	next     time.Time   // earliest next attempt from a clean address while under attack
}

func newAccountLimit(cfg AccountLimitConfig) *accountLimit {
	d := DefaultAccountLimitConfig()
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = d.MaxFailures
	}
	if cfg.Window <= 0 {
		cfg.Window = d.Window
	}
	if cfg.Interval <= 0 {
		cfg.Interval = d.Interval
	}
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = d.MaxKeys
	}
	return &accountLimit{cfg: cfg, now: time.Now, m: map[string]*accountEntry{}}
}

// admit decides an attempt on user from an address that has (dirty) or
// has not failed recently; when refused it says how long to wait.
func (l *accountLimit) admit(user string, dirty bool) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.m[user]
	if e == nil {
		return 0, true
	}
	now := l.now()
	l.prune(e, now)
	if len(e.failures) < l.cfg.MaxFailures {
		return 0, true
	}
	if dirty {
		// Until enough failures age out for the account to be calm.
		return e.failures[len(e.failures)-l.cfg.MaxFailures].Add(l.cfg.Window).Sub(now), false
	}
	if now.Before(e.next) {
		return e.next.Sub(now), false
	}
	e.next = now.Add(l.cfg.Interval)
	return 0, true
}

func (l *accountLimit) fail(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	e := l.m[user]
	if e == nil {
		if len(l.m) >= l.cfg.MaxKeys {
			l.sweepLocked(now)
			if len(l.m) >= l.cfg.MaxKeys {
				return // full of live entries: the per-address limit still holds
			}
		}
		e = &accountEntry{}
		l.m[user] = e
	}
	l.prune(e, now)
	e.failures = append(e.failures, now)
	if over := len(e.failures) - 4*l.cfg.MaxFailures; over > 0 {
		e.failures = e.failures[over:] // enough to decide; bounded memory
	}
}

func (l *accountLimit) succeed(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, user)
}

func (l *accountLimit) prune(e *accountEntry, now time.Time) {
	e.failures = within(e.failures, now, l.cfg.Window)
}

// sweep drops accounts with no failure left in the window.
func (l *accountLimit) sweep() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweepLocked(l.now())
}

func (l *accountLimit) sweepLocked(now time.Time) {
	for k, e := range l.m {
		l.prune(e, now)
		if len(e.failures) == 0 {
			delete(l.m, k)
		}
	}
}

// accountThrottled is the 429 of an account under attack.
func accountThrottled(wait time.Duration) error {
	secs := max(1, int((wait+time.Second-1)/time.Second))
	return errs.Throttledf(time.Duration(secs)*time.Second, "too many failed sign-ins for this account; try again in %d seconds", secs)
}
