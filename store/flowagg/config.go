package flowagg

import "time"

// Config bounds the in-memory aggregation of flow records into
// exporter minutes (see the package comment).
type Config struct {
	// MinuteRows is how many 5-tuples of one exporter's minute are written
	// in detail (the most octets first); the rest is summed into one
	// "other" row per protocol, so totals stay exact.
	MinuteRows int
	// MaxKeys bounds the distinct 5-tuples held in memory over every open
	// minute of every aggregator sharing the counter: a record whose
	// 5-tuple is new once the bound is reached is summed into its minute's
	// "other" row instead (a scan sheds detail, not memory or flows).
	MaxKeys int64
	// Grace is how long a minute stays open after it ends, for records
	// exported late; a minute opened after that (a late flow, a replay of
	// old exports) closes Grace after it opened and is added to what is
	// stored, never lost. No minute stays open more than a minute plus
	// Grace.
	Grace time.Duration
}

// DefaultConfig: 1 000 detail rows per exporter minute, 2^21
// keys held (about 256 MB at the worst), 5 s of grace.
func DefaultConfig() Config {
	return Config{MinuteRows: 1000, MaxKeys: 1 << 21, Grace: 5 * time.Second}
}
