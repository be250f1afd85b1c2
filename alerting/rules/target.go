package rules

import "fmt"

// Target is the target rule: a remote address reaching MinTotalMB of
// traffic for the first time. Each address fires once for the life of
// the process (the table is bounded: past maxTargets it is cleared, and
// an address may then fire once more).
type Target struct {
	fired map[string]struct{}
}

const maxTargets = 100_000

// Eval appends to out an alert for each endpoint of t over minMB that has
// not fired before, keyed by its address.
func (r *Target) Eval(t Traffic, minMB float64, out []Alert) []Alert {
	if minMB <= 0 {
		return out
	}
	if r.fired == nil || len(r.fired) > maxTargets {
		r.fired = map[string]struct{}{}
	}
	limit := int64(minMB * 1e6)
	for _, e := range t.Endpoints {
		if e.Total < limit {
			continue
		}
		if _, ok := r.fired[e.IP]; ok {
			continue
		}
		r.fired[e.IP] = struct{}{}
		out = append(out, Alert{
			Kind: KindTarget, Key: e.IP, Severity: SeverityTarget,
			Message: fmt.Sprintf("new target %s: %.1f MB exchanged (threshold %.0f MB)", e.IP, float64(e.Total)/1e6, minMB),
		})
	}
	return out
}
