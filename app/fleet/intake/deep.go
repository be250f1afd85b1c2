package intake

import (
	"net/netip"
	"strings"

	"netmon/agentmode/wire"
	"netmon/app/errs"
	"netmon/store/record"
)

// DeepSections are the deep collection sections of a telemetry batch
// (spec 2.9, issue 17; wire.Telemetry's Processes, L7 and DNS): bytes per
// process and remote end, TLS SNI / HTTP Host and DNS names seen since the
// previous batch. They are additive fields of protocol version 1: a batch
// without them is a batch of an agent that does not collect (or of an
// older agent). Batch embeds them.
type DeepSections struct {
	Processes []wire.ProcessTraffic `json:"processes,omitempty"`
	L7        []wire.L7Observation  `json:"l7,omitempty"`
	DNS       []wire.DNSObservation `json:"dns,omitempty"`
}

// Limits of the deep sections of one batch. An agent aggregates per
// interval, so even a busy host has a few hundred processes and names;
// more is a misbehaving agent and the batch is refused (413) like one
// with too many connections.
const (
	maxDeepRows = 5000
	maxHostText = 255 // a DNS name is at most 253 characters
	maxKindText = 16
	// maxDeepValue bounds one row's counter (bytes in an interval at
	// maxByteRate for a day): a larger value is a misreport.
	maxDeepValue = maxByteRate * 86400
	// maxReasons bounds the reasons of one (unattributed) row; the agent
	// knows eight. Remotes beyond wire.MaxRemotes per process, and reasons
	// beyond maxReasons, are left out (the agent sends the busiest first).
	maxReasons = 16
)

// takeDeep checks and bounds batch t's deep sections and queues them for
// the store as the record of (agent, seq); nothing is queued for a batch
// without sections, or when the hub policy (-agent-pcap=false) has deep
// collection off. It runs before the batch's telemetry is queued: when the
// telemetry then finds the queue full, the agent retries and the store
// adds the sections once (it records their seq).
func (in *Service) takeDeep(agent int64, seq uint64, t *Batch) error {
	d := &t.DeepSections
	if len(d.Processes) > maxDeepRows || len(d.L7) > maxDeepRows || len(d.DNS) > maxDeepRows {
		in.m.batches.WithLabelValues("invalid").Inc()
		return errs.TooLargef("a batch carries at most %d processes, %d l7 and %d dns rows", maxDeepRows, maxDeepRows, maxDeepRows)
	}
	if !in.cfg.PcapEnabled || len(d.Processes)+len(d.L7)+len(d.DNS) == 0 {
		return nil
	}
	sink, ok := in.sink.(record.DeepSink)
	if !ok {
		return nil // a sink without deep collection (tests)
	}
	rec := record.Deep{AgentID: agent, Seq: seq, TS: t.TS,
		Processes: make([]record.ProcessBytes, 0, len(d.Processes)), L7: make([]record.L7Hit, 0, len(d.L7)), DNS: make([]record.DNSCount, 0, len(d.DNS))}
	for _, p := range d.Processes {
		name := processName(p.Process)
		rec.Processes = append(rec.Processes, record.ProcessBytes{Process: name, PID: max(p.PID, 0),
			BytesIn: min(p.BytesIn, maxDeepValue), BytesOut: min(p.BytesOut, maxDeepValue)})
		for _, r := range p.Remotes[:min(len(p.Remotes), wire.MaxRemotes)] {
			ip, err := netip.ParseAddr(r.IP)
			if err != nil {
				continue // not an address: nothing to group or look up
			}
			rec.Remotes = append(rec.Remotes, record.RemoteBytes{Process: name, Proto: strings.ToLower(clip(r.Proto, maxKindText)),
				IP: ip.Unmap().String(), Port: r.Port, BytesIn: min(r.BytesIn, maxDeepValue), BytesOut: min(r.BytesOut, maxDeepValue)})
		}
		if name == wire.UnattributedProcess {
			for _, r := range p.Reasons[:min(len(p.Reasons), maxReasons)] {
				rec.Unattributed = append(rec.Unattributed, record.ReasonBytes{Reason: clip(r.Reason, maxTextField),
					Bytes: min(r.Bytes, maxDeepValue), Packets: min(r.Packets, maxDeepValue)})
			}
		}
	}
	for _, h := range d.L7 {
		rec.L7 = append(rec.L7, record.L7Hit{Host: clip(h.Host, maxHostText), Kind: strings.ToLower(clip(h.Kind, maxKindText)),
			Process: processName(h.Process), Bytes: min(h.Bytes, maxDeepValue), Hits: min(h.Hits, maxDeepValue)})
	}
	for _, q := range d.DNS {
		rec.DNS = append(rec.DNS, record.DNSCount{Domain: clip(q.Domain, maxHostText), Process: processName(q.Process),
			Queries: min(q.Queries, maxDeepValue), Responses: min(q.Responses, maxDeepValue)})
	}
	if !sink.PutDeep([]record.Deep{rec}) {
		in.m.batches.WithLabelValues("queue_full").Inc()
		return errQueueFull
	}
	return nil
}

// processName bounds a reported process name; no name is unattributed.
func processName(p string) string {
	if p == "" {
		return wire.UnattributedProcess
	}
	return clip(p, maxTextField)
}
