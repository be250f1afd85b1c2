package capture

import (
	"time"

	"netmon/capture/source"
)

// Config configures the hub-local capture component.
type Config struct {
	// Enabled is -capture; when false every start answers that the
	// hub-local capture is disabled.
	Enabled bool
	// Source tunes the packet source (ring size, snaplen, poll timeout).
	Source source.Options
	// FlushEvery is how often finished minutes are written (10 s).
	FlushEvery time.Duration
	// HostConns is -host-conns: the hub machine's own socket inventory
	// (GET /api/connections, the live feed's connections and "agent 0" of
	// the alert rules). Off, the hub sees only what agents send.
	HostConns bool
}

// DefaultConfig enables capture with the source defaults.
func DefaultConfig() Config {
	return Config{Enabled: true, FlushEvery: 10 * time.Second, HostConns: true}
}
