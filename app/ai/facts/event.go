package facts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"netmon/store"
	"netmon/store/record"
)

// Priorities of the incident and anomaly scopes: the object, its
// members or series, then its agent's context (agentFacts lowered by
// contextOffset).
const (
	pObject = 100
	pMember = 96
	pSeries = 96
	// maxMembers bounds the member events listed (the budget keeps the
	// first ones when short).
	maxMembers = 30
	// seriesAround is the series shown before the first and after the
	// last firing; seriesMax the longest series shown.
	seriesAround = 30 * 60
	seriesMax    = 6 * hour
	// seriesPoints is about how many points a series is cut into.
	seriesPoints = 24
)

// contextAgent returns the agent of an incident or event for its context:
// ok false when there is none, it was deleted, or it is of another site
// than a site-bound reader's.
func (b *Builder) contextAgent(ctx context.Context, site string, id int64) (store.Agent, bool, error) {
	if id <= 0 {
		return store.Agent{}, false, nil
	}
	a, err := b.d.Agents.Agent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return a, false, nil
	}
	if err != nil {
		return a, false, err
	}
	return a, site == "" || a.Site == site, nil
}

// incident adds incident id, its member events and its agent's context.
func (b *Builder) incident(ctx context.Context, l *list, site string, id, now int64) error {
	inc, err := b.incidentOf(ctx, site, id)
	if err != nil {
		return err
	}
	a, ok, err := b.contextAgent(ctx, site, inc.AgentID)
	if err != nil {
		return err
	}
	if ok {
		l.addHosts(a.Name)
	}
	l.incident("incident:summary", pObject, inc, a.Name)
	evs, err := b.d.Alerts.IncidentEvents(ctx, id)
	if err != nil {
		return err
	}
	kept := evs[:0]
	for _, e := range evs {
		if site == "" || e.Site == site {
			kept = append(kept, e)
		}
	}
	l.add("incident:events", pMember+1, fmt.Sprintf("Incident %d has %d member alert events; the first %d follow, oldest first.", inc.ID, len(kept), min(len(kept), maxMembers)))
	for i, e := range kept[:min(len(kept), maxMembers)] {
		// Oldest first, but each later one a step lower: the budget keeps
		// how the incident began.
		l.alert("incident:events", pMember-i, e, a.Name)
	}
	if !ok {
		return nil
	}
	return b.agentFacts(ctx, l, a, now, contextOffset)
}

// anomaly adds alert event id, the series around it (anomaly and bw
// events) and its agent's context.
func (b *Builder) anomaly(ctx context.Context, l *list, site string, id, now int64) error {
	e, err := b.eventOf(ctx, site, id)
	if err != nil {
		return err
	}
	a, ok, err := b.contextAgent(ctx, site, e.AgentID)
	if err != nil {
		return err
	}
	if ok {
		l.addHosts(a.Name)
	}
	l.alert("anomaly:event", pObject, e, a.Name)
	if e.Kind == "anomaly" || e.Kind == "bw" {
		if err := b.series(ctx, l, e, now); err != nil {
			return err
		}
	}
	if !ok {
		return nil
	}
	return b.agentFacts(ctx, l, a, now, contextOffset)
}

// series adds the minutes around event e of the series it is about:
// metric "in"/"out" (anomaly <agent>|in, bw hub|in) the interface
// traffic, "proc:<name>" a process's traffic, "dns:<domain>" a domain's
// queries; averaged per bucket, so about seriesPoints values.
func (b *Builder) series(ctx context.Context, l *list, e record.AlertEvent, now int64) error {
	metric := e.Key
	if i := strings.IndexByte(metric, '|'); i >= 0 {
		metric = metric[i+1:]
	}
	to := min(max(e.LastTS, e.TS)+seriesAround, now)
	from := e.TS - seriesAround
	if to-from > seriesMax {
		from = to - seriesMax
	}
	from -= from % 60
	step := max(int64(5*60), (to-from)/seriesPoints/300*300)
	var pts []point
	var unit, name string
	switch {
	case metric == "in" || metric == "out":
		ms, err := b.d.Deep.RateMinutes(ctx, e.AgentID, from, to)
		if err != nil {
			return err
		}
		for _, m := range ms {
			pts = append(pts, point{m.TS, m.InBps, m.OutBps})
		}
		unit = "bit/s"
	case strings.HasPrefix(metric, "proc:") || strings.HasPrefix(metric, "dns:"):
		var procs, domains []string
		name = metric[strings.IndexByte(metric, ':')+1:]
		unit = "bit/s"
		if strings.HasPrefix(metric, "proc:") {
			procs = []string{name}
		} else {
			domains = []string{name}
			unit = "queries/min"
		}
		ms, err := b.d.Deep.DeepMinutes(ctx, e.AgentID, from, to, procs, domains)
		if err != nil {
			return err
		}
		for _, m := range ms[metric] {
			pts = append(pts, point{m.TS, m.V, 0})
		}
	default:
		return nil
	}
	who := "the hub capture"
	if e.AgentID > 0 {
		who = fmt.Sprintf("agent %d", e.AgentID)
	}
	what := "interface traffic (in / out)"
	if name != "" {
		what = "the series named in the data"
	}
	text := fmt.Sprintf("Series of alert event %d: %s of %s, mean per %d minutes from %s to %s (first firing %s, last %s); buckets without samples are left out:",
		e.ID, what, who, step/60, ts(from), ts(to), ts(e.TS), ts(e.LastTS))
	buckets := bucket(pts, from, step)
	if len(buckets) == 0 {
		text += " no samples."
	}
	for i, p := range buckets {
		sep := ";"
		if i == 0 {
			sep = ""
		}
		clock := time.Unix(p.ts, 0).UTC().Format("15:04")
		if name == "" {
			text += fmt.Sprintf("%s %s %s / %s", sep, clock, si(p.a, unit), si(p.b, unit))
		} else {
			text += fmt.Sprintf("%s %s %s", sep, clock, si(p.a, unit))
		}
	}
	var data []fieldT
	if name != "" {
		data = append(data, val("series", metric))
	}
	l.add("anomaly:series", pSeries, text, data...)
	return nil
}

// point is one minute of a series (a, and b for out).
type point struct {
	ts   int64
	a, b float64
}

// bucket averages pts into buckets of step seconds from from.
func bucket(pts []point, from, step int64) []point {
	var out []point
	var n float64
	for _, p := range pts {
		start := from + (p.ts-from)/step*step
		if len(out) == 0 || out[len(out)-1].ts != start {
			if n > 0 {
				out[len(out)-1].a /= n
				out[len(out)-1].b /= n
			}
			out = append(out, point{ts: start})
			n = 0
		}
		out[len(out)-1].a += p.a
		out[len(out)-1].b += p.b
		n++
	}
	if n > 0 {
		out[len(out)-1].a /= n
		out[len(out)-1].b /= n
	}
	return out
}
