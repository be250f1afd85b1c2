package agentmode

import "time"

// MaxBackoff caps the wait between send attempts (spec 8).
const MaxBackoff = 5 * time.Minute

// Backoff is the wait before the next attempt after a failure (spec 1):
// base × 2^min(fails, 3), spread by ±20% jitter, capped at MaxBackoff.
// fails counts the consecutive failures before this one (0 after the
// first), so the waits run base×1, ×2, ×4, ×8, ×8 ... base is the current
// telemetry interval. r is a uniform random number in [0, 1): 0.5 means
// no jitter, 0 gives -20% and values towards 1 give +20%.
func Backoff(base time.Duration, fails int, r float64) time.Duration {
	if fails < 0 {
		fails = 0
	}
	if fails > 3 {
		fails = 3
	}
	d := float64(base) * float64(int64(1)<<fails)
	d *= 0.8 + 0.4*r
	if d > float64(MaxBackoff) {
		return MaxBackoff
	}
	return time.Duration(d)
}
