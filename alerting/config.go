package alerting

import "time"

// Config is the engine's start-up tuning; what fires is the operator's
// Settings (settings.go), kept in the database and changed at run time.
type Config struct {
	// Enabled runs the engine (-alerts). Off, no rule is evaluated and
	// the alert routes answer from what is stored.
	Enabled bool
	// SnapshotEvery is the cadence of the capture rules (bw, target);
	// spec 6.3: every second.
	SnapshotEvery time.Duration
	// InventoryEvery is the cadence of the connection and interface rules
	// (port, proc, iface_util); spec 6.3: every 5 seconds.
	InventoryEvery time.Duration
	// IOCEvery is the cadence of the threat-list rule (ioc); spec 6.3:
	// about every 30 s.
	IOCEvery time.Duration
	// AnomalyEvery is the cadence of the anomaly rule (minute series:
	// every minute).
	AnomalyEvery time.Duration
	// SilenceRefresh is how often silences are re-read from the database
	// (other hubs sharing it may add some); this hub's own changes apply
	// at once.
	SilenceRefresh time.Duration
	// TickBuffer bounds the new events waiting for the WebSocket tick;
	// when full the oldest is dropped (alerting_tick_dropped_total).
	TickBuffer int
	// MaxWritesPerCycle bounds the events stored and repeats counted by
	// one evaluation cycle; past it the rest is shed and counted
	// (netmon_alerting_shed_total, reason cycle_cap), higher severities
	// and every agent's first alerts kept first.
	MaxWritesPerCycle int
	// CycleBudget bounds the time one cycle spends raising; past it the
	// rest is shed and counted (reason cycle_budget).
	CycleBudget time.Duration
}

// DefaultConfig returns the spec's cadences.
func DefaultConfig() Config {
	return Config{
		Enabled:        true,
		SnapshotEvery:  time.Second,
		InventoryEvery: 5 * time.Second,
		IOCEvery:       30 * time.Second,
		AnomalyEvery:   time.Minute,
		SilenceRefresh: 30 * time.Second,
		TickBuffer:     256,
		// A 30-second ioc cycle storing 1 000 events spends about a
		// second of the writer on SQLite.
		MaxWritesPerCycle: 1000,
		CycleBudget:       10 * time.Second,
	}
}
