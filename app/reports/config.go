package reports

import "time"

// Config configures the reports service: schedules, archive and delivery
// (issue 31, spec 4.10). The builder's and the renderers' settings are
// their own.
type Config struct {
	// Tick is how often the runner looks for due schedule slots and
	// prunes the archive. A slot runs at most one Tick after its time.
	Tick time.Duration
	// Timezone is the IANA zone of a schedule created without one
	// ("UTC", "Europe/Paris"); it should be the hub's report zone.
	Timezone string
	// RetentionDays: archived reports older than this are deleted by the
	// runner (0: kept whatever their age, MaxArchived still applies).
	RetentionDays int
	// MaxArchived bounds the archive: beyond it the oldest reports are
	// deleted by the runner (0: no bound).
	MaxArchived int
	// MaxSchedules bounds the stored schedules, so a script cannot fill
	// the database with jobs (0: no bound).
	MaxSchedules int
	// RunTimeout bounds one scheduled run: building, rendering, archiving
	// and mailing the report.
	RunTimeout time.Duration
}

// DefaultConfig: a 30 s tick, UTC, 90 days and 500 reports kept, 100
// schedules, 5 minutes per run.
func DefaultConfig() Config {
	return Config{
		Tick:          30 * time.Second,
		Timezone:      "UTC",
		RetentionDays: 90,
		MaxArchived:   500,
		MaxSchedules:  100,
		RunTimeout:    5 * time.Minute,
	}
}
