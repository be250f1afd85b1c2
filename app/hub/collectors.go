package hub

import (
	"context"

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
	h.flows = flows.New(h.log.With("component", "flows"), h.cfg.Flows, h.queue, templateStore{h.db}, h.reg)
	h.parts.add("flows", h.flows.Start, noCtx(h.flows.Stop))
	h.syslog = syslog.New(h.log.With("component", "syslog"), h.cfg.Syslog, h.queue, h.reg)
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
