package reports

import (
	"context"
	"net/netip"
	"time"

	"netmon/alerting/health"
	"netmon/app/compliance"
	"netmon/store"
)

// The builder's sources: small interfaces, each satisfied by one owner
// of the data, handed in by app/hub. A nil source prints its sections'
// empty-data note; an empty table does too; a source's error fails the
// build (a real database error is not a blank report).

// TrafficSource is the traffic minutes in scope (*store.DB).
type TrafficSource interface {
	ReportTrafficMinutes(ctx context.Context, s store.ReportScope) ([]store.ReportMinute, error)
	ReportTrafficTotal(ctx context.Context, s store.ReportScope) (rx, tx float64, err error)
}

// FlowSource is the flow rollups in scope (*store.DB).
type FlowSource interface {
	ReportProtocols(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
	ReportConversations(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
	ReportDestinations(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
}

// DeepSource is the agents' deep collection in scope (*store.DB).
type DeepSource interface {
	ReportProcesses(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
	ReportDNS(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
	ReportApplications(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
}

// AlertSource is the alert events, incidents and the agents' reporting
// in scope (*store.DB).
type AlertSource interface {
	ReportAlertKinds(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
	ReportAlertSeverities(ctx context.Context, s store.ReportScope) (store.ReportTop, error)
	ReportAlertKeys(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
	ReportUnacked(ctx context.Context, s store.ReportScope, minSeverity int) (int64, error)
	ReportOpenIncidents(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
	ReportAgentUptime(ctx context.Context, s store.ReportScope, limit int) (store.ReportTop, error)
}

// Geo maps a destination address to its country and ASN
// (*geo.Geo of collectors/geo); ok is false when neither is known.
type Geo interface {
	Lookup(addr netip.Addr) (country, asn string, ok bool)
}

// SLASource measures the service levels of a site (*SLA; the sla_breach
// rule uses the same computation).
type SLASource interface {
	Figures(ctx context.Context, site string, from, to time.Time) (SLAFigures, error)
}

// HealthScore is the network health score now (*health.Service).
type HealthScore interface {
	Score(ctx context.Context, site string) (health.NetworkHealth, error)
}

// AIAnalysis is one stored analysis of the AI assistant.
type AIAnalysis struct {
	At      time.Time
	Title   string
	Summary string
}

// AIAnalyses lists the latest analyses in [from, to), newest first, at
// most n (the assistant's answers, app/ai).
type AIAnalyses interface {
	LatestAnalyses(ctx context.Context, site string, from, to time.Time, n int) ([]AIAnalysis, error)
}

// AIAnalysesFunc is a function that lists analyses, as AIAnalyses.
type AIAnalysesFunc func(ctx context.Context, site string, from, to time.Time, n int) ([]AIAnalysis, error)

// LatestAnalyses calls f.
func (f AIAnalysesFunc) LatestAnalyses(ctx context.Context, site string, from, to time.Time, n int) ([]AIAnalysis, error) {
	return f(ctx, site, from, to, n)
}

// ComplianceLog is the compliance log's state (*compliance.Service).
type ComplianceLog interface {
	Status(ctx context.Context) (compliance.Status, error)
}

// ISMSRegisters lists an ISMS register (*compliance.Registers): kind
// compliance.ISMSSoA or compliance.ISMSRisk.
type ISMSRegisters interface {
	List(ctx context.Context, kind string) ([]compliance.Entry, error)
}

// BuildDeps are the builder's sources; every one may be nil.
type BuildDeps struct {
	// Traffic, Flows, Deep and Alerts are the stored data (*store.DB).
	Traffic TrafficSource
	Flows   FlowSource
	Deep    DeepSource
	Alerts  AlertSource
	// Geo names the destinations' countries and ASNs (collectors/geo).
	Geo Geo
	// SLA is the SLA figures (the enterprise report's SLA section).
	SLA SLASource
	// Health is the network health score (*health.Service).
	Health HealthScore
	// AI is the AI assistant's analyses (nil: not configured).
	AI AIAnalyses
	// Compliance is the compliance log (*compliance.Service; nil when
	// the log is off) and ISMS its registers (*compliance.Registers).
	Compliance ComplianceLog
	ISMS       ISMSRegisters
	// Location is the report's time zone (nil: UTC).
	Location *time.Location
	// Hub names the hub in the report's footer.
	Hub string
}
