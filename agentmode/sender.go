package agentmode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"netmon/agentmode/state"
	"netmon/agentmode/wire"
)

// unauthorizedLimit is how many consecutive 401s make the agent enroll
// again (spec 3).
const unauthorizedLimit = 3

// errIdle: nothing to send.
var errIdle = errors.New("nothing to send")

// errReenrollNeedsToken: the hub refuses the agent token and there is no
// enroll token to get a new one.
var errReenrollNeedsToken = errors.New("re-enrollment needs hub.token (flag -hub-token, env NETMON_HUB__TOKEN); retrying with the current token")

// sendLoop enrolls when needed, then sends the oldest batch, one at a
// time; after a failure it backs off and tries the same batch again.
func (a *Agent) sendLoop(ctx context.Context) {
	for ctx.Err() == nil {
		err := a.step(ctx)
		switch {
		case err == nil:
			a.fails = 0
		case errors.Is(err, errIdle):
			select {
			case <-ctx.Done():
			case <-a.wake:
			}
		case ctx.Err() != nil:
			return
		default:
			d := Backoff(a.intervalDuration(), a.fails, a.jitter())
			a.fails++
			var se *StatusError
			if errors.As(err, &se) && se.RetryAfter > d {
				d = se.RetryAfter
			}
			a.logFailure(err, d)
			a.spillLogged()
			if !a.backoffWait(ctx, d) {
				return
			}
		}
	}
}

// step does one unit of work: enroll, or send one batch.
func (a *Agent) step(ctx context.Context) error {
	if !a.store.Get().Enrolled() {
		return a.enroll(ctx)
	}
	a.maybeRenew(ctx)
	b, fromQueue, ok, err := a.next()
	if err != nil {
		return err
	}
	if !ok {
		return errIdle
	}
	return a.send(ctx, b, fromQueue)
}

// next returns the oldest batch waiting: the offline queue's head when it
// holds any (memory is newer: it is spilled behind the queue first, which
// also puts it on disk), else memory's head. It removes nothing.
func (a *Agent) next() (b wire.Telemetry, fromQueue, ok bool, err error) {
	if a.queue.Len() > 0 {
		if err := a.spill(); err != nil {
			return b, false, false, err
		}
		for {
			raw, ok, err := a.queue.Peek()
			if err != nil || !ok {
				return b, true, ok, err
			}
			if err := json.Unmarshal(raw, &b); err == nil {
				return b, true, true, nil
			}
			a.log.Warn("unreadable batch in the offline queue: dropped", "err", err)
			if err := a.queue.Pop(); err != nil {
				return b, false, false, err
			}
			a.addDropped(1)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.mem) == 0 {
		return b, false, false, nil
	}
	return a.mem[0], false, true, nil
}

// send posts one batch and settles its fate from the answer.
func (a *Agent) send(ctx context.Context, b wire.Telemetry, fromQueue bool) error {
	st := a.store.Get()
	b.Dropped = st.Dropped
	var resp wire.TelemetryResponse
	_, err := a.hub.post(ctx, wire.PathTelemetry, bearer(st.AgentToken), b, &resp)
	if err == nil && !resp.OK {
		err = errors.New("hub answered ok=false")
	}
	var se *StatusError
	switch {
	case err == nil:
		if err := a.remove(b.Seq, fromQueue); err != nil {
			return err
		}
		if b.Dropped > 0 || st.Unauthorized > 0 {
			if err := a.store.Update(func(s *state.State) {
				s.Dropped -= min(s.Dropped, b.Dropped)
				s.Unauthorized = 0
			}); err != nil {
				a.log.Error("cannot save the state file", "err", err)
			}
		}
		a.adoptInterval(resp.Interval)
		if resp.PcapEnabled != nil {
			a.adoptPcapPolicy(*resp.PcapEnabled)
		}
		if fromQueue {
			a.log.Debug("queued batch delivered", "seq", b.Seq, "queued", a.queue.Len())
		}
		return nil
	case errors.As(err, &se) && se.Code == http.StatusUnauthorized:
		return a.unauthorized(ctx)
	case errors.As(err, &se) && (se.Code == http.StatusBadRequest || se.Code == http.StatusRequestEntityTooLarge || se.Code == http.StatusUnprocessableEntity):
		// Sending it again cannot succeed, and it would block every
		// batch behind it: drop it and report it as dropped.
		a.log.Error("hub rejected a batch; dropped", "seq", b.Seq, "err", err)
		if err := a.remove(b.Seq, fromQueue); err != nil {
			return err
		}
		a.addDropped(1)
		return nil
	default:
		return err
	}
}

// remove takes the batch just settled off the head it came from.
func (a *Agent) remove(seq uint64, fromQueue bool) error {
	if fromQueue {
		return a.queue.Pop()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// The producer may have dropped the head meanwhile (memory full).
	if len(a.mem) > 0 && a.mem[0].Seq == seq {
		a.mem = a.mem[1:]
	}
	return nil
}

// unauthorized counts a 401 (persisted) and enrolls again at the third in
// a row when an enroll token is configured.
func (a *Agent) unauthorized(ctx context.Context) error {
	var streak int
	if err := a.store.Update(func(s *state.State) { s.Unauthorized++; streak = s.Unauthorized }); err != nil {
		a.log.Error("cannot save the state file", "err", err)
	}
	refused := fmt.Errorf("hub refused the agent token (401, %d in a row)", streak)
	if streak < unauthorizedLimit {
		return refused
	}
	if a.cfg.EnrollToken == "" {
		return fmt.Errorf("%w: %w", refused, errReenrollNeedsToken)
	}
	a.log.Warn("hub refused the agent token 3 times in a row: enrolling again", "streak", streak)
	// On success the queued batches go out at once under the new identity.
	return a.enroll(ctx)
}

// spill moves the batches in memory, oldest first, behind those in the
// offline queue.
func (a *Agent) spill() error {
	a.mu.Lock()
	batches := a.mem
	a.mem = nil
	a.mu.Unlock()
	for i, b := range batches {
		raw, err := json.Marshal(b)
		if err == nil {
			var n int
			if n, err = a.queue.Push(raw); err == nil {
				a.queueDropped(n)
				continue
			}
		}
		a.mu.Lock()
		a.mem = append(append([]wire.Telemetry(nil), batches[i:]...), a.mem...)
		a.mu.Unlock()
		return err
	}
	return nil
}

func (a *Agent) spillLogged() {
	if err := a.spill(); err != nil {
		a.log.Error("cannot write the offline queue; batches stay in memory", "file", a.files.Queue, "err", err)
	}
}

// backoffWait waits d. Batches produced meanwhile go to the offline queue
// at once, so a crash during a long outage loses at most one interval.
func (a *Agent) backoffWait(ctx context.Context, d time.Duration) bool {
	t := a.backoffAfter(d)
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t:
			return true
		case <-a.wake:
			a.spillLogged()
		}
	}
}

// logFailure says what went wrong in terms of what to do about it.
func (a *Agent) logFailure(err error, retryIn time.Duration) {
	attrs := []any{"err", err, "retry_in", retryIn.String(), "queued", a.queue.Len()}
	var te *TrustError
	var ee *enrollError
	switch {
	case errors.As(err, &te):
		a.log.Error("hub certificate refused: it does not chain to the trusted CA; nothing is sent",
			append([]any{"trusted_ca_sha256", te.TrustedCA, "presented_ca_sha256", te.PresentedCA, "trusted_ca_from", te.Anchor,
				"hint", "if the hub's CA was re-created on purpose, delete " + a.files.CA + " and ca_pem from the state file, or pass -hub-ca"}, attrs...)...)
	case errors.Is(err, errNoEnrollToken), errors.Is(err, errReenrollNeedsToken):
		a.log.Error("agent cannot enroll", attrs...)
	case errors.As(err, &ee):
		a.log.Error("enrollment failed", append([]any{"hint", ee.hint()}, attrs...)...)
	default:
		a.log.Warn("telemetry not delivered", attrs...)
	}
}
