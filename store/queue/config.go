package queue

import (
	"time"

	"netmon/store/flowagg"
)

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
	// Flows bounds the in-memory minutes: detail rows per exporter
	// minute, 5-tuples held over all writers, grace for late records.
	Flows flowagg.Config
	// HourRows is how many 5-tuples of an exporter's hour flow_hours keeps
	// in detail (the rest in its other rows).
	HourRows int
	// HourDelay is how long after an hour ends it is rolled up (its last
	// minutes must have closed); HourEvery how often the roll-up looks.
	HourDelay time.Duration
	HourEvery time.Duration
	// OpenMaxAge is how old a writer's summary of its open flow minutes
	// may be when a flow read uses it (open.go): a flow is visible at
	// most about this long after it arrived; a read finding the summary
	// older than half of it asks for the next one without waiting, so
	// readers seldom wait for a summary (a pass over the open keys).
	OpenMaxAge time.Duration
	// OpenWait bounds how long a flow read waits for the writers (a
	// summary, the end of a write under way: milliseconds as a rule). A
	// writer can be held much longer by a slow store (a write with its
	// retries); past OpenWait the read goes ahead with what it has: the
	// tables and the summaries it got, not the minutes being written
	// (those may be missing from that answer, never counted twice unless
	// a second write also begins and commits during it).
	OpenWait time.Duration
}

// DefaultConfig: flows summed per exporter minute with
// flowagg.DefaultConfig, 2 000 detail rows an exporter hour, hours rolled
// up two minutes after they end, looked for every 30 s; 4 workers; up to
// 4 M flows waiting (about 4 s at a million flows a second, 420 MB), 1 M
// syslog events and 32 768 telemetry batches (10 s of 100 000 agents at a
// 30 s interval, about 260 MB) in memory; up to 1 M syslog or telemetry
// records a transaction gathered for up to a second; 3 retries 2 s apart.
// The telemetry bound rides out a database pause of several seconds (a
// checkpoint's burst of writes) without turning agents away.
func DefaultConfig() Config {
	return Config{Capacity: 65536, FlowRecords: 4 << 20, SyslogRecords: 1 << 20, TelemetryRecords: 32768, DeepRecords: 32768,
		Workers: 4, BatchMax: 1 << 20, FlushEvery: time.Second, Retries: 3, RetryDelay: 2 * time.Second,
		Flows: flowagg.DefaultConfig(), HourRows: 2000, HourDelay: 2 * time.Minute, HourEvery: 30 * time.Second,
		OpenMaxAge: 2 * time.Second, OpenWait: 2 * time.Second}
}
