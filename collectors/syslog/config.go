package syslog

import "time"

// Config is the configuration of the syslog receiver.
type Config struct {
	// Addr is the UDP listen address, e.g. ":5514" (-syslog-port); ""
	// turns the receiver off, the default.
	Addr string
	// ReadBuffer is the socket receive buffer (SO_RCVBUF) asked for, in
	// bytes. It absorbs bursts while the workers catch up; as root the
	// system maximum (net.core.rmem_max) is bypassed with SO_RCVBUFFORCE.
	ReadBuffer int
	// Workers is the number of goroutines parsing datagrams.
	Workers int
	// MaxMessage is the longest datagram accepted, in bytes. A longer one
	// is rejected whole and counted (reason "oversize") rather than
	// truncated: RELIABILITY.md case 4 wants a message stored byte-exact
	// or dropped with a counter, never cut silently.
	MaxMessage int
	// Backlog bounds the datagrams read but not yet parsed. When it is
	// full the read loop waits, so the kernel's socket buffer queues the
	// burst and its overflow shows in netmon_syslog_kernel_drops_total.
	Backlog int
	// BatchSize is the most events handed to the sink in one call.
	BatchSize int
	// FlushInterval is the longest an event waits in a worker's batch.
	FlushInterval time.Duration
}

// DefaultConfig returns the hub's defaults: the receiver off (the usual
// port is 5514, -syslog-port turns it on), an 8 MiB socket buffer, two workers, 8 KiB messages (rsyslog's default limit and
// four times RFC 5424's 2 KiB minimum), batches of 256 or every 100 ms.
func DefaultConfig() Config {
	return Config{
		ReadBuffer:    8 << 20,
		Workers:       2,
		MaxMessage:    8192,
		Backlog:       4096,
		BatchSize:     256,
		FlushInterval: 100 * time.Millisecond,
	}
}

// maxDatagram is the largest UDP payload over IPv4; no MaxMessage beyond
// it can matter.
const maxDatagram = 65535

// withDefaults fills zero values from DefaultConfig (Addr excepted: ""
// means off) and bounds MaxMessage.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.ReadBuffer <= 0 {
		c.ReadBuffer = d.ReadBuffer
	}
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.MaxMessage <= 0 {
		c.MaxMessage = d.MaxMessage
	}
	c.MaxMessage = min(c.MaxMessage, maxDatagram)
	if c.Backlog <= 0 {
		c.Backlog = d.Backlog
	}
	if c.BatchSize <= 0 {
		c.BatchSize = d.BatchSize
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = d.FlushInterval
	}
	return c
}
