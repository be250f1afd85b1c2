package hub

import (
	"context"
	"fmt"
	"time"

	"netmon/alerting/rules"
	"netmon/app/audit"
	"netmon/app/compliance"
	"netmon/app/reports"
	"netmon/app/reports/render"
	"netmon/store"
)

// buildReports builds the SLA targets over the stored series, raising
// sla_breach through the alert engine, and the reports service: the
// builder reads the store, the health score and the SLA figures; reports
// are rendered here in Go, archived in the database, mailed through the
// alert e-mail channel and, with -compliance, hashed into the compliance
// log. After the alert engine, the notifier and the compliance log.
func (h *Hub) buildReports() error {
	for _, table := range store.SLATables {
		if err := h.retention.Register(table, "ts"); err != nil {
			return fmt.Errorf("register retention: %w", err)
		}
	}
	// The rollups outlive the raw rows: a 90-day report reads them (and
	// the 90 days before) long after -retention-hours purged the minutes.
	keep := time.Duration(h.cfg.ReportRollup.KeepDays) * 24 * time.Hour
	for _, table := range store.ReportRollupTables {
		if err := h.retention.RegisterKeeping(table, "ts", keep); err != nil {
			return fmt.Errorf("register retention: %w", err)
		}
	}
	engine := h.alerts
	h.sla = reports.NewSLA(h.log.With("component", "sla"), h.cfg.SLA, reports.SLADeps{
		Store: h.db,
		Raise: func(ctx context.Context, kind, key, site, message string, severity int) {
			engine.Raise(ctx, rules.Alert{Kind: kind, Key: key, Site: site, Message: message, Severity: severity})
		},
		Audit:      audit.Builder{},
		Registerer: h.reg,
		IsLeader:   h.leader.IsLeader,
	})
	h.parts.add("sla", h.sla.Start, noCtx(h.sla.Stop))
	// Closed days pre-aggregated for the reports (issue 31's figure).
	rollup := reports.NewRollup(h.log.With("component", "report_rollup"), h.cfg.ReportRollup, h.db, nil, h.reg)
	h.parts.add("report_rollup", rollup.Start, noCtx(rollup.Stop))
	h.reports = reports.New(h.log.With("component", "reports"), h.cfg.Reports, reports.Deps{
		DB:         h.db,
		Builder:    h.reportBuilder(),
		HTML:       render.HTML,
		PDF:        render.PDF,
		Mailer:     h.notifier,
		Compliance: h.compliance,
		Auditor:    audit.Builder{},
		Registry:   h.reg,
		IsLeader:   h.leader.IsLeader,
	})
	h.parts.add("reports", h.reports.Start, noCtx(h.reports.Stop))
	return nil
}

// reportBuilder is the report builder over the store, the GeoIP
// lookups, the SLA figures, the health score, the compliance log (its
// status says when it is off) with its ISMS registers, and the
// assistant's latest analyses.
func (h *Hub) reportBuilder() *reports.Builder {
	loc, err := time.LoadLocation(h.cfg.Reports.Timezone)
	if err != nil {
		loc = time.UTC // validated at start (config); never reached
	}
	deps := reports.BuildDeps{
		Traffic: h.db, Flows: h.db, Deep: h.db, Alerts: h.db,
		SLA:        h.sla,
		Health:     h.health,
		Compliance: h.compliance,
		ISMS:       compliance.NewRegisters(h.db, audit.Builder{}),
		Location:   loc,
		Hub:        h.cfg.Server.PublicURL,
		AI:         reports.AIAnalysesFunc(h.latestAnalyses),
	}
	if h.geo != nil {
		deps.Geo = h.geo
	}
	return reports.NewBuilder(deps)
}
