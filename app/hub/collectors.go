package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"

	"netmon/collectors/flows"
	"netmon/collectors/flows/netflow"
	"netmon/collectors/syslog"
	"netmon/store"
	"netmon/store/queue"
)

// startCollectors starts the ingest queue, then the flow and syslog
// listeners writing into it.
func (h *Hub) startCollectors() error {
	cc := h.cfg.Collectors
	qcfg := queue.DefaultConfig()
	qcfg.Workers = cc.QueueWorkers
	h.queue = queue.New(h.log.With("component", "queue"), qcfg, h.db, h.reg)
	if err := h.queue.Start(); err != nil {
		return fmt.Errorf("ingest queue: %w", err)
	}
	fcfg := flows.DefaultConfig()
	if cc.FlowPort > 0 {
		fcfg.Addr = ":" + strconv.Itoa(cc.FlowPort)
	}
	if cc.SFlowPort > 0 {
		fcfg.SFlowAddr = ":" + strconv.Itoa(cc.SFlowPort)
	}
	h.flows = flows.New(h.log.With("component", "flows"), fcfg, h.queue, templateStore{h.db}, h.reg)
	if err := h.flows.Start(); err != nil {
		return fmt.Errorf("flow listener on port %d: %w", cc.FlowPort, err)
	}
	scfg := syslog.DefaultConfig()
	scfg.Addr = ""
	if cc.SyslogPort > 0 {
		scfg.Addr = ":" + strconv.Itoa(cc.SyslogPort)
	}
	h.syslog = syslog.New(h.log.With("component", "syslog"), scfg, h.queue, h.reg)
	if err := h.syslog.Start(); err != nil {
		return fmt.Errorf("syslog listener on port %d: %w", cc.SyslogPort, err)
	}
	return nil
}

// stopCollectors stops the listeners (flushing into the queue), then the
// queue (writing everything queued).
func (h *Hub) stopCollectors() []error {
	var errs []error
	if h.syslog != nil {
		if err := h.syslog.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop syslog: %w", err))
		}
	}
	if h.flows != nil {
		if err := h.flows.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop flows: %w", err))
		}
	}
	if h.queue != nil {
		if err := h.queue.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop queue: %w", err))
		}
	}
	return errs
}

// templateStore persists v9/IPFIX templates in the store.
type templateStore struct{ db *store.DB }

type templateBody struct {
	Options bool            `json:"options"`
	Fields  []netflow.Field `json:"fields"`
}

func (s templateStore) SaveTemplates(ctx context.Context, ts []netflow.Template) error {
	out := make([]store.FlowTemplate, 0, len(ts))
	for _, t := range ts {
		body, err := json.Marshal(templateBody{Options: t.Options, Fields: t.Fields})
		if err != nil {
			return err
		}
		out = append(out, store.FlowTemplate{Exporter: t.Exporter.String(), Domain: int64(t.Domain), ID: int(t.ID), Version: int(t.Version), Body: string(body)})
	}
	return s.db.SaveFlowTemplates(ctx, out)
}

func (s templateStore) LoadTemplates(ctx context.Context) ([]netflow.Template, error) {
	rows, err := s.db.FlowTemplates(ctx)
	if err != nil {
		return nil, err
	}
	var out []netflow.Template
	for _, r := range rows {
		var b templateBody
		addr, err := netip.ParseAddr(r.Exporter)
		if err != nil || json.Unmarshal([]byte(r.Body), &b) != nil {
			continue // a row this version cannot read is skipped, not fatal
		}
		out = append(out, netflow.Template{Exporter: addr, Domain: uint32(r.Domain), ID: uint16(r.ID), Version: uint16(r.Version), Options: b.Options, Fields: b.Fields})
	}
	return out, nil
}
