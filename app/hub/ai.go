package hub

import (
	"context"
	"fmt"
	"time"

	"netmon/app/ai"
	"netmon/app/ai/facts"
	"netmon/app/ai/triage"
	"netmon/app/audit"
	"netmon/app/reports"
)

// buildAI builds the advisory assistant (issue 32): providers with keys
// sealed by the vault, every connection through the egress lock and the
// outbound guard, the facts of a scope read from the store, and — when
// their blocks are on — triage of new incidents and alerts and the
// nightly summary mailed through the alert e-mail channel. Off (-ai not
// set), the service answers status {enabled:false} and its parts do
// nothing. After the incidents (triage reads them) and before the
// reports (they print the latest analyses).
func (h *Hub) buildAI() {
	h.ai = ai.New(h.log.With("component", "ai"), h.cfg.AI, ai.Deps{
		DB:       h.db,
		Vault:    h.vault,
		Facts:    facts.New(aiFactDeps(h)),
		Guard:    h.netGuard,
		Auditor:  audit.Builder{},
		Registry: h.reg,
		IsLeader: h.leader.IsLeader,
	})
	h.parts.add("ai", h.ai.Start, noCtx(h.ai.Stop))
	on := h.cfg.AI.Enabled
	tcfg := h.cfg.AI.Triage
	tcfg.Enabled = tcfg.Enabled && on
	tri := triage.New(h.log.With("component", "ai_triage"), tcfg, triage.Deps{
		DB: h.db, Analyst: h.ai, Conversations: h.db, Registerer: h.reg, IsLeader: h.leader.IsLeader,
	})
	h.parts.add("ai_triage", tri.Start, noCtx(tri.Stop))
	ncfg := h.cfg.AI.Nightly
	ncfg.Enabled = ncfg.Enabled && on
	loc, err := time.LoadLocation(h.cfg.Reports.Timezone)
	if err != nil {
		loc = time.UTC // validated at start (config); never reached
	}
	nightly := triage.NewNightly(h.log.With("component", "ai_nightly"), ncfg, triage.NightlyDeps{
		DB: h.db, Analyst: h.ai, Mailer: h.notifier, Registerer: h.reg, Location: loc, IsLeader: h.leader.IsLeader,
	})
	h.parts.add("ai_nightly", nightly.Start, noCtx(nightly.Stop))
}

// latestAnalyses gives the reports the assistant's latest answers, with
// real names (a report stays on the hub's side, like the console).
func (h *Hub) latestAnalyses(ctx context.Context, site string, from, to time.Time, n int) ([]reports.AIAnalysis, error) {
	list, err := h.ai.LatestAnalyses(ctx, site, from.Unix(), to.Unix(), n)
	if err != nil {
		return nil, err
	}
	out := make([]reports.AIAnalysis, len(list))
	for i, a := range list {
		what := a.Scope.Kind
		if a.Scope.Ref != "" {
			what += " " + a.Scope.Ref
		}
		out[i] = reports.AIAnalysis{At: time.Unix(a.CreatedTS, 0), Title: fmt.Sprintf("%s (%s, %s)", what, a.Source, a.Model), Summary: a.Text}
	}
	return out, nil
}

// aiFactDeps are the store's reads of the facts, with the agents'
// telemetry interval (online: telemetry within three of them, as in the
// agent list).
func aiFactDeps(h *Hub) facts.Deps {
	d := facts.StoreDeps(h.db)
	d.Interval = h.cfg.Fleet.Interval
	return d
}
