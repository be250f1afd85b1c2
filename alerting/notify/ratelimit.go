package notify

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"netmon/store/record"
)

// Rate limit per channel and source, with a digest (RELIABILITY case 35).
//
// A storm once sent a webhook about 170 requests a second. Each channel
// now gives each source (an agent and a rule: sourceOf) a token bucket of
// RateBurst events refilled one per RateEvery; an event routed to a
// channel whose bucket for its source is empty is not sent on its own but
// counted into that source's digest on the channel. Every DigestEvery the
// pending digests go out as one delivery each: a synthetic event of kind
// "digest" whose message says "and 19 999 more ioc alerts from agent 7
// ...". Sources have buckets of their own, so a storm from one agent
// never spends another agent's. The ticket channel is not limited: an
// alert group shares one ticket already (group.go).

// KindDigest is the kind of a digest's synthetic event.
const KindDigest = "digest"

// limiter holds the buckets and pending digests of every channel.
type limiter struct {
	mu      sync.Mutex
	burst   float64
	every   time.Duration
	buckets map[bucketKey]*bucket
}

type bucketKey struct{ channel, source string }

type bucket struct {
	tokens float64
	at     time.Time
	// Pending digest: how many events were held back since the last
	// digest, the highest severity and the latest of them.
	held   int64
	since  time.Time
	maxSev int
	latest record.AlertEvent
}

// maxBuckets bounds the table: past it, buckets that are full and hold
// no digest are forgotten (they would start full anyway).
const maxBuckets = 4096

func newLimiter(burst int, every time.Duration) *limiter {
	return &limiter{burst: float64(burst), every: every, buckets: map[bucketKey]*bucket{}}
}

// allow reports whether ev may be sent to channel now; false counts it
// into the source's pending digest. A nil limiter (RateBurst < 0) allows
// everything.
func (l *limiter) allow(channel string, ev record.AlertEvent, now time.Time) bool {
	if l == nil || channel == Ticket || ev.State == record.AlertResolved {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	k := bucketKey{channel, sourceOf(ev)}
	b := l.buckets[k]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.pruneLocked(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[k] = b
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	if b.held == 0 {
		b.since = now
	}
	b.held++
	b.maxSev = max(b.maxSev, ev.Severity)
	b.latest = ev
	return false
}

func (l *limiter) refill(b *bucket, now time.Time) {
	if d := now.Sub(b.at); d > 0 && l.every > 0 {
		b.tokens = min(l.burst, b.tokens+float64(d)/float64(l.every))
	}
	b.at = now
}

func (l *limiter) pruneLocked(now time.Time) {
	for k, b := range l.buckets {
		l.refill(b, now)
		if b.held == 0 && b.tokens >= l.burst {
			delete(l.buckets, k)
		}
	}
}

// digest is one pending digest taken for delivery.
type digest struct {
	channel string
	ev      record.AlertEvent
}

// digests takes every pending digest as a synthetic event.
func (l *limiter) digests(now time.Time) []digest {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []digest
	for k, b := range l.buckets {
		if b.held == 0 {
			continue
		}
		out = append(out, digest{channel: k.channel, ev: digestEvent(b, now)})
		b.held, b.maxSev, b.latest = 0, 0, record.AlertEvent{}
	}
	return out
}

// digestEvent is the synthetic event a digest delivers.
func digestEvent(b *bucket, now time.Time) record.AlertEvent {
	l := b.latest
	who := "the hub"
	if l.AgentID != 0 {
		who = "agent " + strconv.FormatInt(l.AgentID, 10)
	}
	msg := fmt.Sprintf("and %s more %s alerts from %s since %s, not sent one by one (this channel's rate limit); the latest: %s",
		thousands(b.held), l.Kind, who, b.since.UTC().Format("15:04:05 UTC"), strings.TrimSpace(l.Message))
	return record.AlertEvent{TS: now.Unix(), Kind: KindDigest, Key: sourceOf(l), Message: msg, Severity: b.maxSev,
		State: record.AlertFiring, Site: l.Site, Count: b.held, AgentID: l.AgentID, LastTS: l.LastTS}
}

// thousands formats n with a space between groups of three digits
// ("19 999"), as alerting/rules does for the messages people read.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && c != '-' && s[i-1] != '-' && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}
