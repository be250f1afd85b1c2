package incident

import (
	"netmon/app/errs"
	"netmon/store/record"
)

// Operations on an incident (POST /api/v1/incidents/{id}/{op}).
const (
	OpAck         = "ack"
	OpInvestigate = "investigate"
	OpResolve     = "resolve"
	OpClose       = "close"
)

// transitions is the state machine: for each operation, the states it
// may start from and the state it leads to.
//
//	open ──ack──▶ ack ──investigate──▶ investigating
//	  └──────────investigate──────────────▲
//	open | ack | investigating ──resolve──▶ resolved
//	open | ack | investigating | resolved ──close──▶ closed (final)
//
// open, ack and investigating count as open: one per correlation key, and
// a new correlation of the key raises that incident. A resolved or
// closed incident is never reopened: the key's next match opens a new one.
var transitions = map[string]struct {
	from []string
	to   string
}{
	OpAck:         {[]string{record.IncidentOpen}, record.IncidentAck},
	OpInvestigate: {[]string{record.IncidentOpen, record.IncidentAck}, record.IncidentInvestigating},
	OpResolve:     {[]string{record.IncidentOpen, record.IncidentAck, record.IncidentInvestigating}, record.IncidentResolved},
	OpClose:       {[]string{record.IncidentOpen, record.IncidentAck, record.IncidentInvestigating, record.IncidentResolved}, record.IncidentClosed},
}

// StateMachine describes the transitions for the API description.
const StateMachine = "States: open, ack, investigating (these three are open: one per correlation key), resolved, closed (final). " +
	"ack: open → ack. investigate: open or ack → investigating. resolve: open, ack or investigating → resolved. " +
	"close: any state but closed → closed. Any other move is 409. A resolved or closed incident is never reopened: the key's next correlation opens a new incident."

// Next returns the state op leads to from state, or a conflict error.
func Next(state, op string) (string, error) {
	t, ok := transitions[op]
	if !ok {
		return "", errs.Invalidf("unknown incident operation %q", op)
	}
	for _, f := range t.from {
		if f == state {
			return t.to, nil
		}
	}
	return "", errs.Conflictf("an incident in state %s cannot be %s", state, opPast(op))
}

func opPast(op string) string {
	switch op {
	case OpAck:
		return "acknowledged"
	case OpInvestigate:
		return "put under investigation"
	case OpResolve:
		return "resolved"
	}
	return "closed"
}
