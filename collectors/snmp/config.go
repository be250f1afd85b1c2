package snmp

import (
	"syscall"
	"time"
)

// Config configures the poller.
type Config struct {
	// Enabled runs the poller (-poller). Run it on one hub replica only:
	// two pollers would poll every device twice.
	Enabled bool
	// Concurrency is how many devices are polled at once
	// (-devpoll-concurrency).
	Concurrency int
	// PerHost caps the polls in flight to one address:port (an agent
	// serving many communities or contexts, a proxy): more would only
	// queue in it until requests time out and are sent again.
	PerHost int
	// Timeout is the wait for one answer; Retries how often a request is
	// sent again before the device counts as not answering.
	Timeout time.Duration
	Retries int
	// DeviceTimeout bounds one whole poll of one device (every request).
	DeviceTimeout time.Duration
	// DefaultPollSeconds applies to devices without poll_seconds.
	DefaultPollSeconds int
	// Refresh is how often the device list is read again (added,
	// changed, deleted devices).
	Refresh time.Duration
	// MaxBackoff caps the wait before polling a device that did not
	// answer again (doubling from its interval).
	MaxBackoff time.Duration
	// BulkVarbinds is the most varbinds asked for in one GETBULK: the
	// columns walked together share it (16 columns: 4 rows a request).
	BulkVarbinds int
	// TopologyEvery is how often a device's LLDP, CDP and ARP tables are
	// walked (they change slowly; edges expire after 24 h unseen).
	TopologyEvery time.Duration
	// MaxARP caps the ARP entries read from one device.
	MaxARP int
}

// DefaultConfig returns the defaults: 96 polls at once (8 to one
// address), 2 s and one retry
// per request, at most 30 s a device, 60 s polls, 15 minutes' backoff at
// most, 64 varbinds a GETBULK, topology tables every 5 minutes.
func DefaultConfig() Config {
	return Config{Enabled: true, Concurrency: 96, PerHost: 8, Timeout: 2 * time.Second, Retries: 1, DeviceTimeout: 30 * time.Second,
		DefaultPollSeconds: 60, Refresh: 30 * time.Second, MaxBackoff: 15 * time.Minute, BulkVarbinds: 64,
		TopologyEvery: 5 * time.Minute, MaxARP: 1024}
}

// Control is the guarded dialer's hook (net.Dialer.Control): it is
// called with every socket the poller opens, before it connects, and may
// refuse the address. nil allows every address: devices' addresses are
// allowed by being configured, so the hub hands in a guard that allows
// them.
type Control func(network, address string, c syscall.RawConn) error
