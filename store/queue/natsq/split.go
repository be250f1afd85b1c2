package natsq

import "netmon/store/record"

// FlowSink takes flow records (*queue.Channel).
type FlowSink interface {
	PutFlows(fs []record.Flow) bool
}

// Sink is the hub's ingest path with -nats: flows to the in-process
// channel queue, which sums them into minutes per exporter before they
// are written (their acknowledgement after the minute's commit is not
// built), and syslog, telemetry and deep batches through JetStream.
type Sink struct {
	q     *Queue
	flows FlowSink
}

// WithFlows returns the sink that sends flows to flows and the rest to q.
func (q *Queue) WithFlows(flows FlowSink) *Sink { return &Sink{q: q, flows: flows} }

// PutFlows hands flows to the channel queue.
func (s *Sink) PutFlows(fs []record.Flow) bool { return s.flows.PutFlows(fs) }

// PutSyslog publishes syslog events to ingest.syslog.
func (s *Sink) PutSyslog(es []record.SyslogEvent) bool { return s.q.PutSyslog(es) }

// PutTelemetry publishes telemetry batches to ingest.telemetry.
func (s *Sink) PutTelemetry(ts []record.Telemetry) bool { return s.q.PutTelemetry(ts) }

// PutDeep publishes deep-collection records to ingest.deep.
func (s *Sink) PutDeep(ds []record.Deep) bool { return s.q.PutDeep(ds) }
