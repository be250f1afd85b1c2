// Package reports owns the reports of spec 4.3 and 4.10: it builds a
// report's model from the stored data (builder), renders it as HTML or
// PDF (app/reports/render), runs the schedules that mail reports, keeps
// the archive of generated reports, and owns the SLA targets whose
// violations raise sla_breach through the alert engine.
package reports

import (
	"time"
)

// Formats of a rendered report.
const (
	FormatHTML = "html"
	FormatPDF  = "pdf"
)

// Request asks for one report (GET /api/report, a schedule's run).
type Request struct {
	// Type is model.TypeTraffic (default), TypeEnterprise or TypeCompliance.
	Type string
	// Days is the range, 1–90; 0 takes the type's default (traffic 7,
	// enterprise 30, compliance 30).
	Days int
	// Format is FormatHTML (default) or FormatPDF.
	Format string
	// Site narrows the report to one site; "" covers every site. The API
	// pins a site-bound caller's site here.
	Site string
	// Now ends the range (the range is the Days whole days up to Now);
	// zero means the service's clock.
	Now time.Time
}

// Output is a rendered report.
type Output struct {
	// Filename names type, range and site: netmon-<type>-<site|all>-<from>-<to>.<html|pdf>
	// with dates as YYYYMMDD in the report's zone.
	Filename    string
	ContentType string // "text/html; charset=utf-8" or "application/pdf"
	Body        []byte
	// SHA256 is the hex SHA-256 of Body; DataSHA256 that of the model
	// (model.Report.DataSHA256).
	SHA256     string
	DataSHA256 string
}

// SLA metrics a target can be set on.
const (
	MetricAgentUptime        = "agent_uptime"        // % of minutes an agent reported, >= threshold
	MetricDeviceAvailability = "device_availability" // % of polls a device answered, >= threshold
	MetricIfaceUtilP95       = "iface_util_p95"      // p95 interface utilisation %, <= threshold
	MetricPacketDrop         = "packet_drop"         // % of packets dropped by capture, <= threshold
)

// SLAFigures are the measured service levels of a site (or of every
// site) over a range: the enterprise report's SLA section and the
// sla_breach rule use the same computation.
type SLAFigures struct {
	// AgentUptimePct is the mean over agents of the % of minutes each
	// reported; Agents counts them (0: no agent, the figure is absent).
	AgentUptimePct float64
	Agents         int
	// DeviceAvailabilityPct is the mean over devices of the % of polls
	// answered; Devices counts them.
	DeviceAvailabilityPct float64
	Devices               int
	// PacketDropPct is dropped / (received + dropped) of the capture over
	// the range; HasPacketDrop is false when no capture counted.
	PacketDropPct float64
	HasPacketDrop bool
	// Targets are the SLA targets in scope with their measured value.
	Targets []TargetStatus
}

// TargetStatus is one SLA target and what it measured.
type TargetStatus struct {
	Target   SLATarget `json:"target"`
	Measured float64   `json:"measured"`
	// Met is false when the measured value violates the threshold;
	// NoData is true when nothing was measured (never a breach).
	Met       bool  `json:"met"`
	NoData    bool  `json:"no_data"`
	Evaluated int64 `json:"evaluated_at"`
}

// SLATarget is a stored target (/api/v1/sla/targets).
type SLATarget struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Metric string `json:"metric" jsonschema:"enum=agent_uptime,enum=device_availability,enum=iface_util_p95,enum=packet_drop"`
	// Scope is "site" (Site set, or "" for every site), "agent" (AgentID)
	// or "device" (DeviceID).
	Scope     string  `json:"scope" jsonschema:"enum=site,enum=agent,enum=device"`
	Site      string  `json:"site"`
	AgentID   int64   `json:"agent_id,omitempty"`
	DeviceID  int64   `json:"device_id,omitempty"`
	Threshold float64 `json:"threshold"`
	// WindowHours is the window measured, 1–2160 (90 days).
	WindowHours int    `json:"window_hours"`
	CreatedAt   int64  `json:"created_at"`
	CreatedBy   string `json:"created_by"`
}

// Schedule is a stored report job (/api/v1/reports/schedules).
type Schedule struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Type   string `json:"type" jsonschema:"enum=traffic,enum=enterprise,enum=compliance"`
	Days   int    `json:"days"`
	Format string `json:"format" jsonschema:"enum=html,enum=pdf"`
	Site   string `json:"site"`
	// Recipients get the report by e-mail through the alert e-mail
	// channel's server (PDF attached, or the HTML attached).
	Recipients []string `json:"recipients"`
	// Spec is daily:HH:MM, weekly:<mon..sun>:HH:MM or monthly:<1-28>:HH:MM
	// in Timezone (an IANA zone, default the hub's report zone).
	Spec     string `json:"spec"`
	Timezone string `json:"timezone"`
	Enabled  bool   `json:"enabled"`
	// LastSlot is the last slot run (Unix s, 0: never), NextRun the next.
	LastSlot   int64  `json:"last_slot"`
	LastStatus string `json:"last_status"`
	NextRun    int64  `json:"next_run"`
	CreatedAt  int64  `json:"created_at"`
	CreatedBy  string `json:"created_by"`
}

// ScheduleInput is the body of POST /api/v1/reports/schedules.
type ScheduleInput struct {
	Name       string   `json:"name" jsonschema_description:"1-100 characters"`
	Type       string   `json:"type" jsonschema:"enum=traffic,enum=enterprise,enum=compliance" jsonschema_description:"default traffic"`
	Days       int      `json:"days" jsonschema_description:"1-90; 0 or absent: the type’s default (traffic 7, enterprise and compliance 30)"`
	Format     string   `json:"format" jsonschema:"enum=html,enum=pdf" jsonschema_description:"default pdf"`
	Site       string   `json:"site" jsonschema_description:"narrow to one site; a site-bound caller’s own site is forced"`
	Recipients []string `json:"recipients" jsonschema_description:"e-mail addresses (at most 50); empty: archived only"`
	Spec       string   `json:"spec" jsonschema_description:"daily:HH:MM, weekly:<mon..sun>:HH:MM or monthly:<1-28>:HH:MM"`
	Timezone   string   `json:"timezone" jsonschema_description:"IANA zone (Europe/Istanbul); default the hub’s report zone"`
}

// ArchiveEntry is one generated report kept in the archive
// (/api/v1/reports/archive); its body is read with OpenArchive.
type ArchiveEntry struct {
	ID         int64  `json:"id"`
	ScheduleID int64  `json:"schedule_id,omitempty"` // 0: generated on request
	Type       string `json:"type" jsonschema:"enum=traffic,enum=enterprise,enum=compliance"`
	Format     string `json:"format" jsonschema:"enum=html,enum=pdf"`
	Site       string `json:"site"`
	Days       int    `json:"days"`
	From       int64  `json:"from"`
	To         int64  `json:"to"`
	Filename   string `json:"filename"`
	Size       int64  `json:"size"`
	SHA256     string `json:"sha256"`
	DataSHA256 string `json:"data_sha256"`
	// Delivery is "" (not mailed), "sent to N" or the classified failure.
	Delivery    string `json:"delivery,omitempty"`
	GeneratedAt int64  `json:"generated_at"`
	GeneratedBy string `json:"generated_by"`
}

// SLATargetInput is the body of POST /api/v1/sla/targets.
type SLATargetInput struct {
	Name        string  `json:"name" jsonschema_description:"1-100 characters"`
	Metric      string  `json:"metric" jsonschema:"enum=agent_uptime,enum=device_availability,enum=iface_util_p95,enum=packet_drop" jsonschema_description:"agent_uptime and device_availability: at least threshold %; iface_util_p95 and packet_drop: at most threshold %"`
	Scope       string  `json:"scope" jsonschema:"enum=site,enum=agent,enum=device" jsonschema_description:"default site"`
	Site        string  `json:"site" jsonschema_description:"scope site: the site (’’ = every site); a site-bound caller’s own site is forced"`
	AgentID     int64   `json:"agent_id" jsonschema_description:"scope agent: the agent"`
	DeviceID    int64   `json:"device_id" jsonschema_description:"scope device: the device"`
	Threshold   float64 `json:"threshold" jsonschema_description:"percent, 0-100"`
	WindowHours int     `json:"window_hours" jsonschema_description:"1-2160 (90 days); default 24"`
}
