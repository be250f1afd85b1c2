package hub

import (
	"fmt"
	"time"

	"netmon/app/compliance"
	"netmon/app/netguard"
	"netmon/collectors/flows"
	"netmon/collectors/syslog"
	"netmon/store/queue"
	"netmon/store/queue/natsq"
)

// buildCollectors builds the ingest queue — the in-process channel queue,
// and with -nats the JetStream queue for syslog, telemetry and deep
// batches beside it (issue 33) — then the flow and syslog listeners
// writing into it (so they stop first and the queues drain what they
// flushed). A configured NATS server that does not answer, or is older
// than natsq.MinServerVersion, stops the start with its reason.
func (h *Hub) buildCollectors() error {
	h.queue = queue.New(h.log.With("component", "queue"), h.cfg.Queue, h.db, h.reg)
	h.parts.add("queue", h.queue.Start, noCtx(h.queue.Stop))
	var sink compliance.IngestSink = h.queue
	if h.cfg.NATS.URL != "" {
		nq, err := natsq.New(h.log.With("component", "nats"), h.cfg.NATS, h.db, h.reg)
		if err != nil {
			return fmt.Errorf("-nats: %w", err)
		}
		h.nats = nq
		h.parts.add("nats", nq.Start, noCtx(nq.Stop))
		sink = nq.WithFlows(h.queue)
	}
	// The compliance log taps the ingest path: with -compliance the
	// producers' records are also chained (it stops after them, so it
	// chains what they flushed). The TSA is reached through the outbound
	// guard; the one address -tsa-url names as an IP literal is allowed
	// (an office's own time-stamp authority), a host name is not.
	tsaGuard := h.netGuard
	if u := h.cfg.Compliance.TSAURL; u != "" {
		if g, err := h.netGuard.ForURL(u); err == nil {
			tsaGuard = g
		}
	}
	log := h.log.With("component", "compliance")
	h.compliance = compliance.New(log, h.cfg.Compliance, compliance.Deps{DB: h.db, Registry: h.reg,
		Now:        h.complianceNow,
		HTTPClient: tsaGuard.HTTPClient(netguard.ClientOptions{Timeout: 30 * time.Second, SameHost: true})})
	h.parts.add("compliance", h.compliance.Start, noCtx(h.compliance.Stop))
	h.ingest = h.compliance.TeeDeep(sink)
	h.flows = flows.New(h.log.With("component", "flows"), h.cfg.Flows, h.ingest, h.db, h.reg)
	h.parts.add("flows", h.flows.Start, noCtx(h.flows.Stop))
	h.syslog = syslog.New(h.log.With("component", "syslog"), h.cfg.Syslog, h.ingest, h.reg)
	h.parts.add("syslog", h.syslog.Start, noCtx(h.syslog.Stop))
	return nil
}
