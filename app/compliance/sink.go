package compliance

import (
	"strconv"

	"netmon/store/record"
)

// Tee returns a sink that hands every record to next and, with
// -compliance on, also queues the flow records, syslog lines and DNS
// queries for the compliance log. Like every Sink it never blocks: a full
// compliance queue drops (and counts) compliance copies only. Off, it
// returns next itself.
func (s *Service) Tee(next record.Sink) record.Sink {
	if !s.cfg.Enabled {
		return next
	}
	return &tee{s: s, next: next}
}

type tee struct {
	s    *Service
	next record.Sink
}

// teeDeep is a tee whose next also takes deep records (the agent intake's
// DNS names): app/hub gets it when the queue implements record.DeepSink.
type teeDeep struct {
	*tee
	deep record.DeepSink
}

// IngestSink is the ingest queue's shape: records and deep records.
type IngestSink interface {
	record.Sink
	record.DeepSink
}

// TeeDeep is Tee for a sink that also implements record.DeepSink.
func (s *Service) TeeDeep(next IngestSink) IngestSink {
	if !s.cfg.Enabled {
		return next
	}
	return teeDeep{tee: &tee{s: s, next: next}, deep: next}
}

func addr(a interface {
	IsValid() bool
	String() string
}) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func (t *tee) PutFlows(fs []record.Flow) bool {
	for i := range fs {
		f := &fs[i]
		t.s.enqueue(pending{kind: KindFlow, ts: f.TS, vals: []string{
			addr(f.Exporter), addr(f.Src), strconv.Itoa(int(f.SrcPort)), addr(f.Dst), strconv.Itoa(int(f.DstPort)),
			strconv.Itoa(int(f.Proto)), strconv.FormatUint(f.Packets, 10), strconv.FormatUint(f.Octets, 10)}})
	}
	return t.next.PutFlows(fs)
}

func (t *tee) PutSyslog(es []record.SyslogEvent) bool {
	for i := range es {
		e := &es[i]
		t.s.enqueue(pending{kind: KindSyslog, ts: e.TS, vals: []string{
			addr(e.Source), e.Host, strconv.Itoa(int(e.Facility)), strconv.Itoa(int(e.Severity)), e.Tag, e.Message}})
	}
	return t.next.PutSyslog(es)
}

func (t *tee) PutTelemetry(ts []record.Telemetry) bool { return t.next.PutTelemetry(ts) }

func (t teeDeep) PutDeep(ds []record.Deep) bool {
	for i := range ds {
		d := &ds[i]
		for _, q := range d.DNS {
			t.s.enqueue(pending{kind: KindDNS, ts: d.TS, vals: []string{
				strconv.FormatInt(d.AgentID, 10), "", q.Process, q.Domain, strconv.FormatUint(q.Queries, 10)}})
		}
	}
	return t.deep.PutDeep(ds)
}
