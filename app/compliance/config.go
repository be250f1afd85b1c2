package compliance

import "time"

// Config configures the compliance log (spec 1 capability 8, issue 21).
type Config struct {
	// Enabled is -compliance: flow records, DNS queries and syslog lines
	// are appended to the chained log, checkpointed hourly, sealed daily.
	Enabled bool
	// KeyFile is -compliance-key: the ed25519 signing key (PEM, created
	// 0600 when absent, its public half written to KeyFile+".pub").
	KeyFile string
	// TSAURL is -tsa-url: the RFC 3161 time-stamp service of the daily
	// seal; empty seals without a stamp (tsa_status "none").
	TSAURL string
	// WORMDir is -worm-dir: each day's signed bundle is written under
	// YYYY/MM/DD, files created exclusively and made read-only; "" = none.
	WORMDir string
	// MaskPII is -mask-pii: evidence bundles are masked unless the request
	// says mask=false.
	MaskPII bool
	// RetentionDays is -compliance-retention-days: raw records older are
	// deleted (checkpoints and seals are kept).
	RetentionDays int
	// Queue bounds the records waiting to be chained; beyond it records
	// are dropped and counted (the ingest path never blocks).
	Queue int
	// Batch is the most records chained and written in one transaction.
	Batch int
	// Tick is how often idle hours are checkpointed and stamps retried.
	Tick time.Duration
	// StampRetry is the pause between two attempts at a failed stamp.
	StampRetry time.Duration
	// DriftTolerance: a checkpoint whose clock is more than this ahead of
	// the system clock raises time_drift.
	DriftTolerance time.Duration
}

// DefaultConfig: off, compliance.key, 730 days, 64k queued records.
func DefaultConfig() Config {
	return Config{
		KeyFile:        "compliance.key",
		RetentionDays:  730,
		Queue:          1 << 16,
		Batch:          4096,
		Tick:           30 * time.Second,
		StampRetry:     5 * time.Minute,
		DriftTolerance: 2 * time.Minute,
	}
}
