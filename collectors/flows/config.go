package flows

import (
	"time"

	"netmon/collectors/flows/netflow"
)

// Config configures the collector.
type Config struct {
	// Addr is the NetFlow/IPFIX/sFlow listen address (":2055"); "" = off.
	Addr string
	// SFlowAddr is a separate sFlow listen address; "" = none.
	SFlowAddr string
	// ReadBuffer is the socket receive buffer (SO_RCVBUF): bursts queue
	// in the kernel while the reader is busy.
	ReadBuffer int
	// Workers decode datagrams concurrently.
	Workers int
	// Backlog is how many datagrams may wait for a worker; beyond it they
	// are dropped and counted (reason backlog_full).
	Backlog int
	// BatchFlows and BatchEvery bound the batches handed to the sink.
	BatchFlows int
	BatchEvery time.Duration
	// TemplateSaveEvery is how often changed templates are persisted.
	TemplateSaveEvery time.Duration
	// NetFlow configures the v9/IPFIX template cache.
	NetFlow netflow.Config
	// ClockBehind and ClockAhead bound a record's time around its
	// arrival; outside, it is stored at its receive time and counted
	// (clock.go). 0 leaves that side unchecked.
	ClockBehind, ClockAhead time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{ReadBuffer: 16 << 20, Workers: 2, Backlog: 8192, BatchFlows: 4096, BatchEvery: 100 * time.Millisecond,
		TemplateSaveEvery: 30 * time.Second, NetFlow: netflow.DefaultConfig(),
		ClockBehind: DefaultClockBehind, ClockAhead: DefaultClockAhead}
}
