package record

// AlertEvent is an alert event of spec 2.6, as the alert engine stores it
// and the API shows it. It lives in this leaf so that the engine
// (alerting), the store and the API share it without importing each
// other.
type AlertEvent struct {
	// ID is the row id, set when stored.
	ID int64 `json:"id"`
	// TS is when the event first fired (Unix seconds).
	TS int64 `json:"ts"`
	// Kind is the rule: bw, port, proc, target, iface_util, ... (spec 6.3).
	Kind string `json:"kind"`
	// Key identifies the condition within its kind; cooldown and repeat
	// counting are per kind|key.
	Key string `json:"key"`
	// Message says what happened, for people.
	Message string `json:"message"`
	// Severity is on the CEF/LEEF scale 0-10 (spec 6.3).
	Severity int `json:"severity"`
	// State is firing, ack or resolved.
	State string `json:"state"`
	// Site is the site of the agent (or of the hub: empty).
	Site string `json:"site"`
	// Count is how many times the condition fired while the event was
	// open (1 when stored).
	Count int64 `json:"count"`
	// GroupID is the incident the event belongs to (0: none yet).
	GroupID int64 `json:"group_id"`
	// ExtRef is a ticket reference (empty: none).
	ExtRef string `json:"ext_ref"`
	// AgentID is the agent the condition was seen on (0: the hub).
	AgentID int64 `json:"agent_id"`
	// LastTS is when the condition last fired (Unix seconds).
	LastTS int64 `json:"last_ts"`
	// ResolvedTS is when the event was resolved (0: not yet).
	ResolvedTS int64 `json:"resolved_ts"`
	// Process is the process the event is about (rules proc and port on
	// an agent's or the hub's sockets; empty for the other kinds).
	Process string `json:"process"`
}

// Alert event states (spec 3).
const (
	AlertFiring   = "firing"
	AlertAck      = "ack"
	AlertResolved = "resolved"
)

// AlertSilence suppresses new alert events that match it between Start
// and End. An empty matcher matches anything; `*` in a matcher matches any
// run of characters.
type AlertSilence struct {
	ID int64 `json:"id"`
	// Kind, Site and Key are glob matchers (empty = any).
	Kind string `json:"kind"`
	Site string `json:"site"`
	Key  string `json:"key"`
	// Start and End bound the silence (Unix seconds); past End it no
	// longer matches, without anyone removing it.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// Comment says why.
	Comment string `json:"comment"`
	// CreatedBy is who created it; CreatedAt when (Unix seconds).
	CreatedBy string `json:"created_by"`
	CreatedAt int64  `json:"created_at"`
}

// AlertNote is a note on an alert event.
type AlertNote struct {
	ID      int64  `json:"id"`
	EventID int64  `json:"event_id"`
	TS      int64  `json:"ts"`
	Author  string `json:"author"`
	Text    string `json:"text"`
}
