package record

// Deep is what one agent telemetry batch reports of deep collection (spec
// 2.9, issue 17): bytes per process, TLS SNI / HTTP Host observations and
// DNS names, each a delta over the batch's interval. The store adds them
// to per-agent, per-minute aggregates exactly once per (AgentID, Seq): a
// replayed batch is recognised by its seq and adds nothing.
type Deep struct {
	AgentID int64
	// Seq is the telemetry batch's seq; TS its time, Unix seconds (already
	// clamped by the intake).
	Seq uint64
	TS  int64
	// Processes, Remotes, Unattributed, L7 and DNS are the batch's
	// sections, already bounded and made valid UTF-8 by the intake.
	Processes []ProcessBytes
	// Remotes split the processes' bytes by remote end.
	Remotes []RemoteBytes
	// Unattributed splits the bytes of process "(unattributed)" by the
	// reason the agent gave (short-lived process, kernel socket, other
	// network namespace ...).
	Unattributed []ReasonBytes
	L7           []L7Hit
	DNS          []DNSCount
}

// ProcessBytes is the traffic of one process (one PID) in a batch.
// Process "(unattributed)" (PID 0) carries the bytes the agent saw but
// could not tie to a process.
type ProcessBytes struct {
	Process  string
	PID      int32
	BytesIn  uint64
	BytesOut uint64
}

// RemoteBytes is the traffic of one process with one remote end in a
// batch.
type RemoteBytes struct {
	Process  string
	Proto    string
	IP       string
	Port     uint16
	BytesIn  uint64
	BytesOut uint64
}

// ReasonBytes is the unattributed traffic of one reason in a batch.
type ReasonBytes struct {
	Reason  string
	Bytes   uint64
	Packets uint64
}

// L7Hit is one (host, kind, process) of a batch: Kind is "tls" (ClientHello
// SNI) or "http" (HTTP/1.x Host).
type L7Hit struct {
	Host    string
	Kind    string
	Process string
	Bytes   uint64
	Hits    uint64
}

// DNSCount is one (domain, process) of a batch.
type DNSCount struct {
	Domain    string
	Process   string
	Queries   uint64
	Responses uint64
}

// DeepSink takes deep collection records. It is apart from Sink so that
// the producers that never send them (flow and syslog collectors) and
// their test doubles need not know of them; the queue implements both.
// Like Sink's Put methods, PutDeep never blocks and copies what it keeps.
type DeepSink interface {
	PutDeep(ds []Deep) bool
}
