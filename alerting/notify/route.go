package notify

import (
	"slices"

	"netmon/store/record"
)

// Route is a routing rule (GET|POST|PUT|DELETE /api/v1/alerts/routes):
// an event matching every set condition goes to Channels; rules are
// evaluated in order and the first match ends the walk unless Continue.
type Route struct {
	// ID names the rule (set by the store).
	ID string `json:"id"`
	// MinSeverity matches events of at least this severity (0-10).
	MinSeverity int `json:"min_severity" jsonschema:"minimum=0,maximum=10"`
	// Kinds matches these kinds (empty = any).
	Kinds []string `json:"kinds"`
	// Sites matches these sites (empty = any; "" names the hub's own).
	Sites []string `json:"sites"`
	// Channels receive a matching event (only those enabled are used; an
	// empty list drops the event on purpose).
	Channels []string `json:"channels"`
	// Continue goes on to the next rules after a match.
	Continue bool `json:"continue"`
}

// Matches reports whether ev meets every condition of r.
func (r Route) Matches(ev record.AlertEvent) bool {
	return ev.Severity >= r.MinSeverity &&
		(len(r.Kinds) == 0 || slices.Contains(r.Kinds, ev.Kind)) &&
		(len(r.Sites) == 0 || slices.Contains(r.Sites, ev.Site))
}

// Target is one channel an event goes to and the rule that chose it.
type Target struct {
	Channel string
	Route   string // "" = the default (no rule matched)
}

// Routing returns the channels ev goes to: the enabled channels of the
// matching rules in order (each channel once, by the first rule naming
// it), or every enabled channel when no rule matches — including when
// there are no rules — so an event is never dropped by omission.
func Routing(routes []Route, enabled []string, ev record.AlertEvent) []Target {
	var out []Target
	matched := false
	for _, r := range routes {
		if !r.Matches(ev) {
			continue
		}
		matched = true
		for _, c := range r.Channels {
			if slices.Contains(enabled, c) && !slices.ContainsFunc(out, func(t Target) bool { return t.Channel == c }) {
				out = append(out, Target{Channel: c, Route: r.ID})
			}
		}
		if !r.Continue {
			break
		}
	}
	if !matched {
		for _, c := range enabled {
			out = append(out, Target{Channel: c})
		}
	}
	return out
}
