package devices

import (
	"time"

	"netmon/collectors/fwrest"
	"netmon/collectors/snmp"
)

// Config configures the device component: its schedule and each
// driver's tuning (YAML block "devices", the drivers' keys prefixed
// snmp_ and firewall_; -poller and -devpoll-concurrency are its flags).
type Config struct {
	// Enabled polls the devices (-poller). Run it on one hub replica
	// only: two would poll every device twice. Off, no device of any
	// driver is polled; the registry and probes still work.
	Enabled bool
	// Concurrency is how many devices are polled at once
	// (-devpoll-concurrency).
	Concurrency int
	// PerHost caps the polls in flight to one address (an SNMP agent
	// serving many communities, a proxy): more would only queue in it
	// until requests time out and are sent again.
	PerHost int
	// DefaultPollSeconds applies to devices without poll_seconds.
	DefaultPollSeconds int
	// Refresh is how often the device list is read again (added,
	// changed, deleted devices).
	Refresh time.Duration
	// MaxBackoff caps the wait before polling a device that did not
	// answer again (doubling from its interval), for drivers without a
	// cap of their own.
	MaxBackoff time.Duration
	// SNMP tunes the SNMP driver (timeouts, GETBULK size, topology).
	SNMP snmp.Config
	// Firewall tunes the firewall REST driver (request spacing, timeout,
	// body and record caps, its backoff cap).
	Firewall fwrest.Config
}

// DefaultConfig returns the defaults: polling on, 96 devices at once (8
// to one address), 60 s polls, the list re-read every 30 s, 15 minutes'
// backoff at most (30 for REST devices, the driver's), and each driver's
// defaults.
func DefaultConfig() Config {
	return Config{Enabled: true, Concurrency: 96, PerHost: 8, DefaultPollSeconds: 60, Refresh: 30 * time.Second,
		MaxBackoff: 15 * time.Minute, SNMP: snmp.DefaultConfig(), Firewall: fwrest.DefaultConfig()}
}
