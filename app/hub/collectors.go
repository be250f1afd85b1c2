package hub

import (
	"context"
	"time"

	"netmon/alerting/rules"
	"netmon/app/compliance"
	"netmon/app/netguard"
	"netmon/collectors/flows"
	"netmon/collectors/flows/netflow"
	"netmon/collectors/syslog"
	"netmon/store"
	"netmon/store/queue"
)

// buildCollectors builds the ingest queue, then the flow and syslog
// listeners writing into it (so they stop first and the queue drains
// what they flushed).
func (h *Hub) buildCollectors() {
	h.queue = queue.New(h.log.With("component", "queue"), h.cfg.Queue, h.db, h.reg)
	h.parts.add("queue", h.queue.Start, noCtx(h.queue.Stop))
	// The compliance log taps the ingest path: with -compliance the
	// producers' records are also chained (it stops after them, so it
	// chains what they flushed). The TSA is reached through the outbound
	// guard; the one address -tsa-url names as an IP literal is allowed
	// (an office's own time-stamp authority), a host name is not.
	compCfg := h.cfg.Compliance
	tsaGuard := h.netGuard
	if compCfg.TSAURL != "" {
		if g, err := h.netGuard.ForURL(compCfg.TSAURL); err == nil {
			tsaGuard = g
		}
	}
	compCfg.HTTPClient = tsaGuard.HTTPClient(netguard.ClientOptions{Timeout: 30 * time.Second, SameHost: true})
	h.compliance = compliance.New(h.log.With("component", "compliance"), compCfg, compliance.Deps{DB: h.db, Registry: h.reg,
		OnDrift: h.timeDrift})
	h.parts.add("compliance", h.compliance.Start, noCtx(h.compliance.Stop))
	h.ingest = h.compliance.TeeDeep(h.queue)
	h.flows = flows.New(h.log.With("component", "flows"), h.cfg.Flows, h.ingest, templateStore{h.db}, h.reg)
	h.parts.add("flows", h.flows.Start, noCtx(h.flows.Stop))
	h.syslog = syslog.New(h.log.With("component", "syslog"), h.cfg.Syslog, h.ingest, h.reg)
	h.parts.add("syslog", h.syslog.Start, noCtx(h.syslog.Stop))
}

// templateStore keeps v9/IPFIX templates in the store's rows, in the
// format of collectors/flows.
type templateStore struct{ db *store.DB }

func (s templateStore) SaveTemplates(ctx context.Context, ts []netflow.Template) error {
	rows, err := flows.EncodeTemplates(ts)
	if err != nil {
		return err
	}
	out := make([]store.FlowTemplate, len(rows))
	for i, r := range rows {
		out[i] = store.FlowTemplate(r)
	}
	return s.db.SaveFlowTemplates(ctx, out)
}

func (s templateStore) LoadTemplates(ctx context.Context) ([]netflow.Template, error) {
	rows, err := s.db.FlowTemplates(ctx)
	if err != nil {
		return nil, err
	}
	in := make([]flows.StoredTemplate, len(rows))
	for i, r := range rows {
		in[i] = flows.StoredTemplate(r)
	}
	return flows.DecodeTemplates(in), nil
}

// timeDrift raises the time_drift alert (spec 6.3) when a compliance
// checkpoint's clock is ahead of the system clock. Severity 6: the spec
// gives none; a clock that went back puts the seals' order in doubt.
func (h *Hub) timeDrift(msg string) {
	h.log.Warn("time_drift", "message", msg)
	if h.alerts != nil {
		h.alerts.Raise(context.Background(), rules.Alert{Kind: "time_drift", Key: "compliance", Message: msg, Severity: 6})
	}
}
