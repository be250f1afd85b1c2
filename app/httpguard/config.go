package httpguard

import "time"

// Config configures the guard. Zero values mean "derive from the open file
// limit" where noted.
type Config struct {
	// MaxConns caps the HTTP connections open at once (0 = the open file
	// limit less Reserve). At the cap a new connection evicts the
	// connection that has waited longest without delivering a request; if
	// every open connection is serving a request, the new one is closed.
	MaxConns int
	// MaxConnsPerSource caps the connections of one source address (0 =
	// a quarter of MaxConns, at least 16), with the same eviction rule
	// inside that source, so one address cannot take the whole budget.
	MaxConnsPerSource int
	// Reserve is how many file descriptors are kept out of MaxConns for
	// the database, recordings, logs and outbound calls (0 = a quarter of
	// the limit, at least 64), so accept never fails for want of one.
	Reserve int
	// BodyTimeout is how long a request may take to send its body, unless
	// its route declares another (5 s: the hub's own bodies are small).
	BodyTimeout time.Duration
	// LowFileLimit is the open file limit below which the hub warns at
	// start (4096).
	LowFileLimit uint64
}

// DefaultConfig returns caps derived from the file limit and a 5 s body
// deadline.
func DefaultConfig() Config {
	return Config{BodyTimeout: 5 * time.Second, LowFileLimit: 4096}
}
