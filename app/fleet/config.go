package fleet

import (
	"time"

	"netmon/agentmode/wire"
)

// Config configures the fleet service.
type Config struct {
	// StaticToken is the -enroll-token secret (never empty here: the hub
	// generates one when the operator gave none).
	StaticToken string
	// MultiSite enforces the -multi-site enrollment rules: only site-bound
	// enroll tokens enroll, and creating a token needs a site.
	MultiSite bool
	// PcapEnabled is the -agent-pcap policy sent in the hello.
	PcapEnabled bool
	// Interval is the telemetry interval agents are told to use.
	Interval time.Duration
	// ArchiveDays deletes agents offline this many days (0 = never).
	ArchiveDays int
	// ArchiveEvery is the period of the archive run (the maintenance cycle).
	ArchiveEvery time.Duration
	// Archive runs the archive loop (false on all but one hub sharing a
	// database, like -prune).
	Archive bool
}

// DefaultConfig: 30 s telemetry, 30 days archive checked every 10 minutes.
func DefaultConfig() Config {
	return Config{PcapEnabled: true, Interval: wire.DefaultIntervalSeconds * time.Second, ArchiveDays: 30, ArchiveEvery: 10 * time.Minute, Archive: true}
}
