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
	// AllowedOrigins are the origins (scheme://host[:port], e.g.
	// https://netmon.example from -public-url, https://<tls host>:<port>,
	// http://localhost:<port>) whose pages may open the feed, compared
	// exactly: scheme, host and port (a missing port is the scheme's
	// default). The request's own origin (its scheme and Host) is allowed
	// too. Empty: every origin is accepted (the spec's behaviour when
	// -public-url and -tls-hosts are both empty).
	AllowedOrigins []string
}

// DefaultConfig returns one tick a second, four queued ticks per client.
func DefaultConfig() Config {
	return Config{Interval: time.Second, Buffer: 4, WriteTimeout: 5 * time.Second}
}
