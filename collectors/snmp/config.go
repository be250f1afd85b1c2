package snmp

import (
	"syscall"
	"time"
)

// Config tunes the SNMP driver. The schedule (concurrency, intervals,
// backoff) is the device component's Config.
type Config struct {
	// Timeout is the wait for one answer; Retries how often a request is
	// sent again before the device counts as not answering.
	Timeout time.Duration
	Retries int
	// DeviceTimeout bounds one whole poll of one device (every request).
	DeviceTimeout time.Duration
	// BulkVarbinds is the most varbinds asked for in one GETBULK: the
	// columns walked together share it (16 columns: 4 rows a request).
	BulkVarbinds int
	// TopologyEvery is how often a device's LLDP, CDP and ARP tables are
	// walked (they change slowly; edges expire after 24 h unseen).
	TopologyEvery time.Duration
	// MaxARP caps the ARP entries read from one device.
	MaxARP int
}

// DefaultConfig returns the defaults: 2 s and one retry per request, at
// most 30 s a device, 64 varbinds a GETBULK, topology tables every 5
// minutes, 1 024 ARP entries.
func DefaultConfig() Config {
	return Config{Timeout: 2 * time.Second, Retries: 1, DeviceTimeout: 30 * time.Second, BulkVarbinds: 64,
		TopologyEvery: 5 * time.Minute, MaxARP: 1024}
}

// Control is the guarded dialer's hook (net.Dialer.Control): it is
// called with every socket the driver opens, before it connects, and may
// refuse the address. nil allows every address: devices' addresses are
// allowed by being configured, so the hub hands in a guard that allows
// them.
type Control func(network, address string, c syscall.RawConn) error
