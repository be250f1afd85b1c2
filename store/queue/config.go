package queue

import "time"

// Config configures the channel queue.
type Config struct {
	// Capacity is how many batches (Put calls) may wait in the channel; a
	// Put beyond it, or beyond its kind's record limit below, is dropped
	// (reason queue_full) rather than block a collector's read loop.
	Capacity int
	// FlowRecords, SyslogRecords and TelemetryRecords bound the records of
	// each kind held in memory, waiting or being written. The bound is per
	// kind and in records because batches differ a thousandfold: a flow
	// batch carries up to 4 096 flows, a telemetry batch is one agent's
	// (about 8 KB with its connections).
	FlowRecords      int
	SyslogRecords    int
	TelemetryRecords int
	// DeepRecords bounds the deep collection records (one per agent batch
	// that carries processes, L7 or DNS sections, up to a few hundred rows
	// each) held in memory.
	DeepRecords int
	// Workers write batches concurrently (-queue-workers). On SQLite the
	// store serialises writes anyway; more workers help PostgreSQL.
	Workers int
	// BatchMax is the most records a worker writes in one transaction.
	BatchMax int
	// FlushEvery bounds how long a record waits for its batch to fill.
	FlushEvery time.Duration
	// Retries is how often a failed write is retried (RetryDelay apart)
	// before its records are dropped (reason store_error).
	Retries    int
	RetryDelay time.Duration
}

// DefaultConfig: 4 workers; up to 4 M flows (about 4 s at a million flows a
// second, 420 MB), 1 M syslog events and 32 768 telemetry batches (10 s of
// 100 000 agents at a 30 s interval, about 260 MB) in memory; up to
// 1 M records a transaction gathered for up to a second; 3 retries 2 s
// apart. A second of records per transaction lets the store sum a
// conversation's records into one row update instead of many: that, not
// decoding, is the cost of a busy collector. The telemetry bound rides out
// a database pause of several seconds (a checkpoint's burst of writes)
// without turning agents away.
func DefaultConfig() Config {
	return Config{Capacity: 65536, FlowRecords: 4 << 20, SyslogRecords: 1 << 20, TelemetryRecords: 32768, DeepRecords: 32768,
		Workers: 4, BatchMax: 1 << 20, FlushEvery: time.Second, Retries: 3, RetryDelay: 2 * time.Second}
}
