package topology

import "time"

// Config tunes the topology service.
type Config struct {
	// PruneEvery is the period of the loop that expires edges unseen for
	// EdgeTTL.
	PruneEvery time.Duration
}

// DefaultConfig expires edges every 10 minutes.
func DefaultConfig() Config {
	return Config{PruneEvery: 10 * time.Minute}
}
