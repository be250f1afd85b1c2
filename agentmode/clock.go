package agentmode

import "time"

// Clock is the agent's time source. The production loop waits on After,
// certificate renewal reads Now; tests drive both with a fake.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
