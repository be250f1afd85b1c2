package auth

import (
	"testing"
	"time"

	"netmon/app/errs"
)

func TestAccountLimit(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := newAccountLimit(AccountLimitConfig{MaxFailures: 3, Window: time.Minute, Interval: 2 * time.Second})
	l.now = func() time.Time { return now }
	type step struct {
		desc     string
		advance  time.Duration
		fail     int  // failures to record first
		dirty    bool // the address has failed recently
		wantOK   bool
		wantWait time.Duration
	}
	steps := []step{
		{desc: "no failures", wantOK: true},
		{desc: "below the limit, dirty address", fail: 2, dirty: true, wantOK: true},
		{desc: "at the limit, dirty address waits for the oldest failure to age out", fail: 1, dirty: true, wantWait: time.Minute},
		{desc: "at the limit, clean address: one try", wantOK: true},
		{desc: "a second clean try within the interval waits", advance: 500 * time.Millisecond, wantWait: 1500 * time.Millisecond},
		{desc: "after the interval, allowed again", advance: 1500 * time.Millisecond, wantOK: true},
		{desc: "failures age out: calm again", advance: time.Minute, dirty: true, wantOK: true},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		for range s.fail {
			l.fail("alice")
		}
		wait, ok := l.admit("alice", s.dirty)
		if ok != s.wantOK || (!ok && wait != s.wantWait) {
			t.Errorf("%s: admit = (%v, %v), want (%v, %v)", s.desc, wait, ok, s.wantWait, s.wantOK)
		}
	}
	// A success clears the account; another account was never touched.
	for range 3 {
		l.fail("bob")
	}
	if _, ok := l.admit("bob", true); ok {
		t.Error("bob under attack admitted from a dirty address")
	}
	l.succeed("bob")
	if _, ok := l.admit("bob", true); !ok {
		t.Error("bob still limited after a success")
	}
	if _, ok := l.admit("carol", true); !ok {
		t.Error("an untouched account was limited")
	}
	if err := accountThrottled(1500 * time.Millisecond); errs.RetryAfterOf(err, 0) != 2*time.Second || err.Error() != "too many failed sign-ins for this account; try again in 2 seconds" {
		t.Errorf("error %q, Retry-After %d", err, errs.RetryAfterOf(err, 0))
	}
}
