package api

import (
	"netmon/store"
	"netmon/store/record"
)

// The response types below are the API's copies of store rows that
// handlers answer with. They are field-for-field the store's (so each
// converts with a plain Go conversion, FlowRow(row)), and that is the
// point: a field added, removed or retyped in the store no longer changes
// the public contract silently, it breaks the conversion here, where the
// API decides whether the body follows. JSON names and schema tags are
// the public ones and stay byte-identical to what the API served before.

// FlowRow is a flow group of GET /api/v1/flows (store.FlowRow).
type FlowRow struct {
	TS       int64  `json:"ts"` // last seen
	Device   string `json:"device"`
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	SrcPort  int    `json:"src_port"`
	DstPort  int    `json:"dst_port"`
	Proto    int    `json:"proto"`
	Packets  int64  `json:"packets"`
	Octets   int64  `json:"octets"`
	Flows    int64  `json:"flows"`
	First    int64  `json:"first_seen"`
	LastSeen int64  `json:"-"`
	// Truncated marks the last row that sums the rest of the window.
	Truncated bool `json:"truncated,omitempty" jsonschema:"description=set on the last row when the rows above do not cover the window (the limit, or detail the store did not keep): it sums the rest (src and dst empty), so the rows add up to the window's totals"`
}

// Conversation is a row of GET /api/v1/flows/conversations
// (store.Conversation).
type Conversation struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	SrcPort  int    `json:"src_port,omitempty"`
	DstPort  int    `json:"dst_port,omitempty"`
	Proto    int    `json:"proto,omitempty"`
	Packets  int64  `json:"packets"`
	Octets   int64  `json:"octets"`
	Flows    int64  `json:"flows"`
	First    int64  `json:"first_seen"`
	LastSeen int64  `json:"last_seen"`
	// Truncated: as FlowRow.Truncated.
	Truncated bool `json:"truncated,omitempty" jsonschema:"description=set on the last row when the rows above do not cover the window (the limit, or detail the store did not keep): it sums the rest (src and dst empty), so the rows add up to the window's totals"`
}

// SyslogRow is a stored syslog message (store.SyslogRow).
type SyslogRow struct {
	ID       int64  `json:"id"`
	TS       int64  `json:"ts"`
	Host     string `json:"host"`
	Severity int    `json:"severity"`
	Tag      string `json:"tag"`
	Message  string `json:"message"`
	Facility int    `json:"facility"`
	Source   string `json:"source"`
	// Raw is the datagram when its bytes did not survive as text.
	Raw []byte `json:"raw_b64,omitempty" jsonschema:"description=the datagram as received (base64) when invalid UTF-8 or NUL bytes were replaced in host/tag/message; absent otherwise"`
}

// FlowEvent is an item of the event pages (store.Event).
type FlowEvent struct {
	Type    string         `json:"type"`
	TS      int64          `json:"ts"`
	Device  string         `json:"device"`
	AgentID int64          `json:"agent_id"`
	Key     string         `json:"id"`
	Data    map[string]any `json:"data"`
}

// ProcessItem is a row of GET /api/v1/processes (store.ProcessItem).
type ProcessItem struct {
	Process    string `json:"process" jsonschema_description:"process name; (unattributed) holds the bytes the agents could not tie to a process"`
	BytesIn    int64  `json:"bytes_in"`
	BytesOut   int64  `json:"bytes_out"`
	Total      int64  `json:"total" jsonschema_description:"bytes_in + bytes_out"`
	AgentCount int64  `json:"agent_count" jsonschema_description:"distinct agents that reported the process in the window"`
}

// L7Item is a row of GET /api/v1/l7 (store.L7Item).
type L7Item struct {
	Host       string `json:"host" jsonschema_description:"TLS SNI or HTTP Host as sent by the client, stored as text"`
	Kind       string `json:"kind" jsonschema_description:"tls (ClientHello SNI) or http (HTTP/1.x Host)"`
	Process    string `json:"process"`
	Bytes      int64  `json:"bytes"`
	Hits       int64  `json:"hits"`
	AgentCount int64  `json:"agent_count"`
}

// DNSItem is a row of GET /api/v1/dns (store.DNSItem).
type DNSItem struct {
	Domain     string `json:"domain"`
	Process    string `json:"process"`
	Queries    int64  `json:"queries"`
	Responses  int64  `json:"responses"`
	AgentCount int64  `json:"agent_count"`
}

// AgentSample is a point of an agent's history (store.AgentSample).
type AgentSample struct {
	TS    int64   `json:"ts"`
	In    float64 `json:"in"`
	Out   float64 `json:"out"`
	Local float64 `json:"local"`
	PPS   float64 `json:"pps"`
}

// AuditEvent is a record of the audit chain (store.AuditEvent).
type AuditEvent struct {
	ID         int64  `json:"id"`
	TS         int64  `json:"ts"`
	Username   string `json:"username"`
	Role       string `json:"role"`
	Action     string `json:"action"`
	Target     string `json:"target"`
	Detail     string `json:"detail"`
	IP         string `json:"ip"`
	PrevHash   string `json:"prev_hash"`
	Hash       string `json:"hash"`
	ActorType  string `json:"actor_type,omitempty"`
	RequestID  string `json:"request_id,omitempty"`
	UserAgent  string `json:"user_agent,omitempty"`
	Result     string `json:"result,omitempty"`
	BeforeJSON string `json:"before_json,omitempty"`
	AfterJSON  string `json:"after_json,omitempty"`
}

// AuditVerification is the answer of GET /api/v1/audit/verify
// (store.AuditVerify).
type AuditVerification struct {
	OK       bool  `json:"ok"`
	BrokenAt int64 `json:"broken_at"`
	Checked  int64 `json:"checked"`
}

// ComplianceReview is a review record (store.ComplianceReview).
type ComplianceReview struct {
	ID      int64  `json:"id"`
	TS      int64  `json:"ts"`
	Author  string `json:"author"`
	Kind    string `json:"kind"`
	Period  string `json:"period"`
	Notes   string `json:"notes"`
	Finding string `json:"finding"`
}

// AlertEvent is a stored alert event (record.AlertEvent).
type AlertEvent struct {
	ID         int64  `json:"id"`
	TS         int64  `json:"ts"`
	Kind       string `json:"kind"`
	Key        string `json:"key"`
	Message    string `json:"message"`
	Severity   int    `json:"severity"`
	State      string `json:"state"`
	Site       string `json:"site"`
	Count      int64  `json:"count"`
	GroupID    int64  `json:"group_id"`
	ExtRef     string `json:"ext_ref"`
	AgentID    int64  `json:"agent_id"`
	LastTS     int64  `json:"last_ts"`
	ResolvedTS int64  `json:"resolved_ts"`
	Process    string `json:"process"`
}

// AlertNote is a note on an alert event (record.AlertNote).
type AlertNote struct {
	ID      int64  `json:"id"`
	EventID int64  `json:"event_id"`
	TS      int64  `json:"ts"`
	Author  string `json:"author"`
	Text    string `json:"text"`
}

// AlertSilence is a silence (record.AlertSilence).
type AlertSilence struct {
	ID        int64  `json:"id"`
	Kind      string `json:"kind"`
	Site      string `json:"site"`
	Key       string `json:"key"`
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
	Comment   string `json:"comment"`
	CreatedBy string `json:"created_by"`
	CreatedAt int64  `json:"created_at"`
}

// Incident is a correlated incident (record.Incident).
type Incident struct {
	ID        int64  `json:"id"`
	Key       string `json:"correlation_key"`
	Rule      int    `json:"rule"`
	AgentID   int64  `json:"agent_id"`
	Site      string `json:"site"`
	State     string `json:"state" jsonschema:"enum=open,enum=ack,enum=investigating,enum=resolved,enum=closed"`
	Severity  int    `json:"severity"`
	Risk      int    `json:"risk"`
	Title     string `json:"title"`
	OpenedTS  int64  `json:"opened_ts"`
	UpdatedTS int64  `json:"updated_ts"`
	ClosedTS  int64  `json:"closed_ts"`
}

// convertAll converts a store answer item by item, keeping nil as nil
// (JSON null) and empty as empty (JSON []): the answers stay what they were.
func convertAll[S, D any](in []S, conv func(S) D) []D {
	if in == nil {
		return nil
	}
	out := make([]D, len(in))
	for i, v := range in {
		out[i] = conv(v)
	}
	return out
}

func flowRowOf(r store.FlowRow) FlowRow                         { return FlowRow(r) }
func conversationOf(r store.Conversation) Conversation          { return Conversation(r) }
func syslogRowOf(r store.SyslogRow) SyslogRow                   { return SyslogRow(r) }
func flowEventOf(r store.Event) FlowEvent                       { return FlowEvent(r) }
func processItemOf(r store.ProcessItem) ProcessItem             { return ProcessItem(r) }
func l7ItemOf(r store.L7Item) L7Item                            { return L7Item(r) }
func dnsItemOf(r store.DNSItem) DNSItem                         { return DNSItem(r) }
func agentSampleOf(r store.AgentSample) AgentSample             { return AgentSample(r) }
func auditEventOf(r store.AuditEvent) AuditEvent                { return AuditEvent(r) }
func reviewOf(r store.ComplianceReview) ComplianceReview        { return ComplianceReview(r) }
func alertEventOf(r record.AlertEvent) AlertEvent               { return AlertEvent(r) }
func alertNoteOf(r record.AlertNote) AlertNote                  { return AlertNote(r) }
func alertSilenceOf(r record.AlertSilence) AlertSilence         { return AlertSilence(r) }
func incidentOf(r record.Incident) Incident                     { return Incident(r) }
func auditVerificationOf(r store.AuditVerify) AuditVerification { return AuditVerification(r) }
