package errs

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestKinds(t *testing.T) {
	cause := errors.New("disk full")
	sentinel := Conflictf("enroll token exhausted")
	tests := []struct {
		desc      string
		err       error
		kind      Kind
		msg       string
		field     string
		retry     time.Duration
		wantCause error
	}{
		{"plain error is internal", errors.New("boom"), Internal, "boom", "", time.Minute, nil},
		{"invalid field prefixes the message", InvalidField("name", "must not be empty"), Invalid, "name: must not be empty", "name", time.Minute, nil},
		{"invalid without field", Invalidf("bad %s", "body"), Invalid, "bad body", "", time.Minute, nil},
		{"wrapped keeps its kind", fmt.Errorf("hello: %w", NotFoundf("agent %d not found", 7)), NotFound, "hello: agent 7 not found", "", time.Minute, nil},
		{"throttled carries retry", Throttledf(30*time.Second, "slow down"), Throttled, "slow down", "", 30 * time.Second, nil},
		{"unavailable without retry uses default", Unavailablef(0, "queue full"), Unavailable, "queue full", "", time.Minute, nil},
		{"wrap keeps message, adds cause", sentinel.Wrap(cause), Conflict, "enroll token exhausted", "", time.Minute, cause},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := KindOf(tt.err); got != tt.kind {
				t.Errorf("KindOf = %v, want %v", got, tt.kind)
			}
			if got := tt.err.Error(); got != tt.msg {
				t.Errorf("message = %q, want %q", got, tt.msg)
			}
			if e, ok := As(tt.err); ok && e.Field != tt.field {
				t.Errorf("field = %q, want %q", e.Field, tt.field)
			}
			if got := RetryAfterOf(tt.err, time.Minute); got != tt.retry {
				t.Errorf("RetryAfterOf = %v, want %v", got, tt.retry)
			}
			if tt.wantCause != nil && !errors.Is(tt.err, tt.wantCause) {
				t.Errorf("cause %v not in chain", tt.wantCause)
			}
		})
	}
	if !errors.Is(sentinel.Wrap(cause), sentinel) {
		t.Error("a wrapped sentinel is no longer errors.Is the sentinel")
	}
	if errors.Is(Conflictf("other"), sentinel) {
		t.Error("different messages compare equal")
	}
	if Kind(42).String() != "kind(42)" || Throttled.String() != "throttled" {
		t.Error("kind names wrong")
	}
}
