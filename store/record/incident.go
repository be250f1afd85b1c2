package record

// Incident is a group of one agent's alert events that a correlation rule
// of spec 6.4 tied together (alerting/incident decides, the store keeps
// it, the API shows it).
type Incident struct {
	ID int64 `json:"id"`
	// Key is the correlation key r<rule>|agent<id>; one incident per key
	// is open at a time.
	Key string `json:"correlation_key"`
	// Rule is the correlation rule, 1 to 5 (alerting/incident).
	Rule    int    `json:"rule"`
	AgentID int64  `json:"agent_id"`
	Site    string `json:"site"`
	// State is open, ack, investigating, resolved or closed.
	State string `json:"state" jsonschema:"enum=open,enum=ack,enum=investigating,enum=resolved,enum=closed"`
	// Severity is the highest of its members' (0-10); it only rises.
	Severity int `json:"severity"`
	// Risk is 0-100; the highest computed is kept.
	Risk      int    `json:"risk"`
	Title     string `json:"title"`
	OpenedTS  int64  `json:"opened_ts"`
	UpdatedTS int64  `json:"updated_ts"`
	// ClosedTS is when it was resolved or closed (0: not yet).
	ClosedTS int64 `json:"closed_ts"`
}

// Incident states.
const (
	IncidentOpen          = "open"
	IncidentAck           = "ack"
	IncidentInvestigating = "investigating"
	IncidentResolved      = "resolved"
	IncidentClosed        = "closed"
)

// IncidentIsOpen reports whether a state counts as open (one per key).
func IncidentIsOpen(state string) bool {
	return state == IncidentOpen || state == IncidentAck || state == IncidentInvestigating
}
