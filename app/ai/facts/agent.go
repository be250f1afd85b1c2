package facts

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"netmon/store"
)

// Priorities of the agent scope; an incident or alert event's agent
// context is the same facts lowered by contextOffset.
const (
	pAgentSummary   = 100
	pAgentTraffic   = 97
	pAgentRates     = 96
	pAgentAlerts    = 94
	pAgentIncidents = 92
	pAgentConns     = 90
	pAgentOpenAlert = 88
	pAgentChanges   = 86
	pAgentProcs     = 82
	pAgentDNS       = 76
	pAgentL7        = 74
	pAgentIfaces    = 60
	// contextOffset lowers the agent's facts below the incident's or
	// event's own.
	contextOffset = 40
)

// agentFacts adds the facts of agent a; off lowers every priority (the
// agent as the context of an incident or alert event).
func (b *Builder) agentFacts(ctx context.Context, l *list, a store.Agent, now int64, off int) error {
	l.addHosts(a.Name)
	state := "offline"
	if b.online(a, now) {
		state = "online"
	}
	l.add("agent:summary", pAgentSummary-off, fmt.Sprintf("Agent %d: %s, last telemetry %s, enrolled %s, %d connections in its last telemetry, process attribution %s, %d telemetry batches dropped by the agent.",
		a.ID, state, ts(a.LastSeen), ts(a.EnrolledAt), a.Conns, word(a.AttrMethod), a.Dropped),
		l.host("agent", a.Name), l.site(a.Site), val("version", a.Version), val("os", a.OS), val("arch", a.Arch),
		val("address", a.RemoteIP), val("capture_interface", a.AttrIface), val("attribution_note", a.AttrNote))

	byID := map[int64]store.Agent{a.ID: a}
	if err := b.talkers(ctx, l, "agent:traffic", pAgentTraffic-off, "", a.ID, byID, now); err != nil {
		return err
	}
	hist, err := b.d.Agents.AgentHistory(ctx, a.ID, now-hour)
	if err != nil {
		return err
	}
	if len(hist) > 0 {
		var sumIn, sumOut, peakIn, peakOut float64
		for _, s := range hist {
			sumIn, sumOut = sumIn+s.In, sumOut+s.Out
			peakIn, peakOut = max(peakIn, s.In), max(peakOut, s.Out)
		}
		n := float64(len(hist))
		last := hist[len(hist)-1]
		l.add("agent:rates", pAgentRates-off, fmt.Sprintf("Interface rates of agent %d over the last hour (%d samples): mean %s in, %s out; peak %s in, %s out; last sample %s: %s in, %s out, %.0f packets/s.",
			a.ID, len(hist), bitsText(sumIn/n*8), bitsText(sumOut/n*8), bitsText(peakIn*8), bitsText(peakOut*8), ts(last.TS), bitsText(last.In*8), bitsText(last.Out*8), last.PPS))
	}
	b.agentIfaces(l, a, off)
	l.connections(a, off)

	q := store.OpenAlertQuery{AgentID: a.ID}
	if err := b.alerts(ctx, l, "agent:alerts", q, pAgentAlerts-off, pAgentOpenAlert-off, byID); err != nil {
		return err
	}
	if err := b.incidents(ctx, l, "agent:incidents", "", a.ID, pAgentIncidents-off, byID); err != nil {
		return err
	}
	if err := b.changes(ctx, l, a, now, off); err != nil {
		return err
	}
	who := "agent " + strconv.FormatInt(a.ID, 10)
	return b.deepTops(ctx, l, store.DeepScope{From: now - hour, AgentID: a.ID}, who, pAgentProcs-off, pAgentDNS-off, pAgentL7-off)
}

// ifaceRate is an interface of the agent list's rates (spec 2.9).
type ifaceRate struct {
	Name      string  `json:"name"`
	RxBps     float64 `json:"rx_bps"`
	TxBps     float64 `json:"tx_bps"`
	PPS       float64 `json:"pps"`
	SpeedMbps int64   `json:"speed_mbps"`
}

// agentIfaces adds the per-interface rates of the agent's last telemetry.
func (b *Builder) agentIfaces(l *list, a store.Agent, off int) {
	var rates []ifaceRate
	if json.Unmarshal([]byte(a.Rates), &rates) != nil {
		return
	}
	// The busiest interfaces first.
	slices.SortStableFunc(rates, func(x, y ifaceRate) int {
		return cmp.Compare(y.RxBps+y.TxBps, x.RxBps+x.TxBps)
	})
	for i, r := range rates[:min(len(rates), b.d.Limit)] {
		speed := "unknown"
		if r.SpeedMbps > 0 {
			speed = bitsText(float64(r.SpeedMbps) * 1e6)
		}
		l.add("agent:interfaces", prio(pAgentIfaces-off, i), fmt.Sprintf("Interface of agent %d in its last telemetry: %s received, %s sent, %.0f packets/s, link speed %s.",
			a.ID, bitsText(r.RxBps), bitsText(r.TxBps), r.PPS, speed), val("interface", r.Name))
	}
}

// connections adds a summary of the agent's last connection inventory:
// counts by state, the most frequent remote ends and processes.
func (l *list) connections(a store.Agent, off int) {
	var conns []struct {
		Proto      string `json:"proto"`
		RemoteAddr string `json:"remote_addr"`
		Status     string `json:"status"`
		Process    string `json:"process"`
	}
	if a.Connections == "" || json.Unmarshal([]byte(a.Connections), &conns) != nil {
		return
	}
	type key struct{ proto, remote, process string }
	states := map[string]int{}
	remotes := map[key]int{}
	procs := map[string]int{}
	for _, c := range conns {
		states[c.Status]++
		if c.RemoteAddr != "" && !strings.HasPrefix(c.RemoteAddr, "0.0.0.0") && !strings.HasPrefix(c.RemoteAddr, "[::]") && c.RemoteAddr != "*:*" {
			remotes[key{c.Proto, c.RemoteAddr, c.Process}]++
		}
		procs[c.Process]++
	}
	fields := []fieldT{val("states", countsText(states, 12))}
	fields = append(fields, val("processes", countsText(procs, 10)))
	keys := make([]key, 0, len(remotes))
	for k := range remotes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y key) int {
		return cmp.Or(cmp.Compare(remotes[y], remotes[x]), cmp.Compare(x.remote, y.remote), cmp.Compare(x.proto, y.proto), cmp.Compare(x.process, y.process))
	})
	for i, k := range keys[:min(len(keys), 10)] {
		fields = append(fields, val("remote "+strconv.Itoa(i+1), fmt.Sprintf("%s %s by %s: %d", k.proto, k.remote, orUnknown(k.process), remotes[k])))
	}
	l.add("agent:connections", pAgentConns-off, fmt.Sprintf("Connections of agent %d in its last telemetry: %d in all, %d distinct remote ends; counts by state and process, then the most frequent remote ends (protocol, address, process: count).",
		a.ID, len(conns), len(remotes)), fields...)
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown process)"
	}
	return s
}

// countsText is "name count" pairs, the largest first, at most n.
func countsText(m map[string]int, n int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.SortFunc(names, func(x, y string) int { return cmp.Or(cmp.Compare(m[y], m[x]), cmp.Compare(x, y)) })
	parts := make([]string, 0, min(len(names), n))
	for _, k := range names[:min(len(names), n)] {
		parts = append(parts, fmt.Sprintf("%s %d", orUnknown(k), m[k]))
	}
	if len(names) > n {
		parts = append(parts, fmt.Sprintf("%d more", len(names)-n))
	}
	return strings.Join(parts, ", ")
}

// changes adds what the agent reported for the first time in the last
// day (processes, destinations, DNS names) that it did not report in the
// days before (as far as the store keeps them, 7 days at most).
func (b *Builder) changes(ctx context.Context, l *list, a store.Agent, now int64, off int) error {
	procs, dests, domains, err := b.d.Agents.AgentNewNames(ctx, a.ID, now-baselineDays*day, now-day, b.d.Limit)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		source, what, unit string
		names              []store.NewName
		p                  int
	}{
		{"changes:new_processes", "processes", "bytes", procs, pAgentChanges},
		{"changes:new_destinations", "destinations (process, protocol, address, port)", "bytes", dests, pAgentChanges - 1},
		{"changes:new_domains", "DNS names", "queries", domains, pAgentChanges - 2},
	} {
		if len(c.names) == 0 {
			l.add(c.source, c.p-off, fmt.Sprintf("Agent %d reported no new %s in the last 24 hours (compared with the 6 days before, as far as kept).", a.ID, c.what))
			continue
		}
		fields := make([]fieldT, 0, len(c.names))
		for i, n := range c.names {
			total := bytesText(float64(n.Total))
			if c.unit == "queries" {
				total = strconv.FormatInt(n.Total, 10) + " queries"
			}
			fields = append(fields, val(strconv.Itoa(i+1), fmt.Sprintf("%s (first %s, %s)", n.Name, ts(n.FirstTS), total)))
		}
		l.add(c.source, c.p-off, fmt.Sprintf("New %s of agent %d in the last 24 hours, not reported in the 6 days before (as far as kept), the busiest first with first time and %s since.",
			c.what, a.ID, c.unit), fields...)
	}
	return nil
}
