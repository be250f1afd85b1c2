package fleet

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"netmon/agentmode/wire"
	"netmon/store/record"
)

// DeepSections are the deep collection sections of a telemetry batch
// (spec 2.9, issue 17): bytes per process, TLS SNI / HTTP Host and DNS
// names seen since the previous batch. They are additive fields of
// protocol version 1: a batch without them is a batch of an agent that
// does not collect (or of an older agent). Batch embeds them.
type DeepSections struct {
	Processes []ProcessTraffic `json:"processes,omitempty" jsonschema_description:"bytes per process since the previous batch"`
	L7        []L7Observation  `json:"l7,omitempty" jsonschema_description:"TLS SNI and HTTP Host seen since the previous batch"`
	DNS       []DNSObservation `json:"dns,omitempty" jsonschema_description:"DNS names asked since the previous batch"`
}

// UnattributedProcess names the bytes an agent saw but could not tie to a
// process; Reason then says why.
const UnattributedProcess = "(unattributed)"

// ProcessTraffic is one process's bytes in a batch (deltas).
type ProcessTraffic struct {
	Process  string `json:"process" jsonschema_description:"process name; (unattributed) for bytes not tied to a process"`
	PID      int32  `json:"pid"`
	BytesIn  uint64 `json:"bytes_in"`
	BytesOut uint64 `json:"bytes_out"`
	Reason   string `json:"reason,omitempty" jsonschema_description:"for (unattributed): why (short-lived process, kernel thread, other network namespace ...)"`
}

// L7Observation is one (host, kind, process) in a batch (deltas).
type L7Observation struct {
	Host    string `json:"host"`
	Kind    string `json:"kind" jsonschema_description:"tls (ClientHello SNI) or http (HTTP/1.x Host)"`
	Process string `json:"process"`
	Bytes   uint64 `json:"bytes"`
	Hits    uint64 `json:"hits"`
}

// DNSObservation is one (domain, process) in a batch (deltas).
type DNSObservation struct {
	Domain    string `json:"domain"`
	Process   string `json:"process"`
	Queries   uint64 `json:"queries"`
	Responses uint64 `json:"responses"`
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
	// maxDestinations bounds the remote ends kept per batch from the
	// connection inventory (the busiest).
	maxDestinations = 1000
)

// takeDeep checks and bounds batch t's deep sections and queues them for
// the store as the record of (agent, seq); nothing is queued for a batch
// without sections, or when the hub policy (-agent-pcap=false) has deep
// collection off. It runs before the batch's telemetry is queued: when the
// telemetry then finds the queue full, the agent retries and the store
// adds the sections once (it records their seq).
func (s *Service) takeDeep(agent int64, seq uint64, t *Batch) error {
	d := &t.DeepSections
	if len(d.Processes) > maxDeepRows || len(d.L7) > maxDeepRows || len(d.DNS) > maxDeepRows {
		s.m.batches.WithLabelValues("invalid").Inc()
		return errorf(http.StatusRequestEntityTooLarge, "a batch carries at most %d processes, %d l7 and %d dns rows", maxDeepRows, maxDeepRows, maxDeepRows)
	}
	if !s.cfg.PcapEnabled || len(d.Processes)+len(d.L7)+len(d.DNS) == 0 {
		return nil
	}
	sink, ok := s.sink.(record.DeepSink)
	if !ok {
		return nil // a sink without deep collection (tests)
	}
	rec := record.Deep{AgentID: agent, Seq: seq, TS: t.TS,
		Processes: make([]record.ProcessBytes, 0, len(d.Processes)), L7: make([]record.L7Hit, 0, len(d.L7)), DNS: make([]record.DNSCount, 0, len(d.DNS))}
	for _, p := range d.Processes {
		name := processName(p.Process)
		reason := ""
		if name == UnattributedProcess {
			reason = clip(p.Reason, maxTextField)
		}
		rec.Processes = append(rec.Processes, record.ProcessBytes{Process: name, PID: max(p.PID, 0), Reason: reason,
			BytesIn: min(p.BytesIn, maxDeepValue), BytesOut: min(p.BytesOut, maxDeepValue)})
	}
	for _, h := range d.L7 {
		rec.L7 = append(rec.L7, record.L7Hit{Host: clip(h.Host, maxHostText), Kind: strings.ToLower(clip(h.Kind, maxKindText)),
			Process: processName(h.Process), Bytes: min(h.Bytes, maxDeepValue), Hits: min(h.Hits, maxDeepValue)})
	}
	for _, q := range d.DNS {
		rec.DNS = append(rec.DNS, record.DNSCount{Domain: clip(q.Domain, maxHostText), Process: processName(q.Process),
			Queries: min(q.Queries, maxDeepValue), Responses: min(q.Responses, maxDeepValue)})
	}
	rec.Conns = destinations(t.Connections.JSON())
	if !sink.PutDeep([]record.Deep{rec}) {
		s.m.batches.WithLabelValues("queue_full").Inc()
		return errorf(http.StatusServiceUnavailable, "the hub's ingest queue is full; keep the batch and retry later")
	}
	return nil
}

// processName bounds a reported process name; no name is unattributed.
func processName(p string) string {
	if p == "" {
		return UnattributedProcess
	}
	return clip(p, maxTextField)
}

// destinations groups a connection inventory (as stored: a well-formed
// JSON array) by process and remote end, leaving out listening and
// unconnected sockets, the busiest maxDestinations first.
func destinations(doc []byte) []record.ConnSeen {
	var conns []wire.Connection
	if json.Unmarshal(doc, &conns) != nil || len(conns) == 0 {
		return nil
	}
	type key struct {
		process, proto string
		ip             netip.Addr
		port           uint16
	}
	counts := map[key]uint64{}
	for _, c := range conns {
		ap, err := netip.ParseAddrPort(c.RemoteAddr)
		if err != nil || ap.Port() == 0 || ap.Addr().IsUnspecified() {
			continue
		}
		counts[key{processName(c.Process), strings.ToLower(c.Proto), ap.Addr().Unmap(), ap.Port()}]++
	}
	out := make([]record.ConnSeen, 0, len(counts))
	for k, n := range counts {
		out = append(out, record.ConnSeen{Process: k.process, Proto: k.proto, RemoteIP: k.ip.String(), RemotePort: k.port, Count: n})
	}
	slices.SortFunc(out, func(a, b record.ConnSeen) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Process, b.Process), cmp.Compare(a.Proto, b.Proto),
			cmp.Compare(a.RemoteIP, b.RemoteIP), cmp.Compare(a.RemotePort, b.RemotePort))
	})
	if len(out) > maxDestinations {
		out = out[:maxDestinations]
	}
	return out
}
