package live

import "time"

// Config configures the feed.
type Config struct {
	// Interval between ticks (1 s).
	Interval time.Duration
	// Buffer is how many ticks a client may have queued before it is
	// dropped as too slow.
	Buffer int
	// WriteTimeout bounds one write to a client.
	WriteTimeout time.Duration
}

// DefaultConfig returns one tick a second, four queued ticks per client.
func DefaultConfig() Config {
	return Config{Interval: time.Second, Buffer: 4, WriteTimeout: 5 * time.Second}
}
