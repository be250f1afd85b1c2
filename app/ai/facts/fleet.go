package facts

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"netmon/store"
	"netmon/store/record"
)

// Priorities of the fleet scope: the state of the fleet and what is open
// first, then who talks most, then what runs and is looked up, then the
// devices' interfaces. Rows of a list lose two per rank (prio).
const (
	pFleetAgents    = 100
	pFleetAlerts    = 98
	pFleetIncidents = 94
	pFleetOpenAlert = 90
	pFleetTalkers   = 86
	pFleetDevices   = 84
	pFleetCapture   = 82
	pFleetOffline   = 80
	pFleetHosts     = 74
	pFleetProcs     = 70
	pFleetDNS       = 64
	pFleetL7        = 62
	pFleetIfaces    = 60
)

// fleet adds the facts of every agent and device of site ("" = all).
func (b *Builder) fleet(ctx context.Context, l *list, site string, now int64) error {
	agents, err := b.d.Agents.ListAgents(ctx, site)
	if err != nil {
		return err
	}
	byID := make(map[int64]store.Agent, len(agents))
	var online, never, attrOff int
	var offline []store.Agent
	for _, a := range agents {
		l.addHosts(a.Name)
		byID[a.ID] = a
		switch {
		case b.online(a, now):
			online++
		case a.LastSeen == 0:
			never++
			offline = append(offline, a)
		default:
			offline = append(offline, a)
		}
		if a.AttrMethod == "off" || a.AttrMethod == "" {
			attrOff++
		}
	}
	devices, err := b.d.Devices.Devices(ctx, site)
	if err != nil {
		return err
	}
	for _, d := range devices {
		l.addHosts(d.Name, d.SysName, d.Host)
	}
	where := "Fleet (every site)"
	if site != "" {
		where = "Fleet of the reader's site"
	}
	l.add("agents:summary", pFleetAgents, fmt.Sprintf("%s at %s: %d agents enrolled, %d online (telemetry within %d s), %d offline (%d never sent telemetry); process attribution is off on %d.",
		where, ts(now), len(agents), online, int(3*b.d.Interval.Seconds()), len(offline), never, attrOff), siteField(site))

	// Offline agents, the most recently seen first: the ones that just
	// went away matter more than the long gone.
	slices.SortStableFunc(offline, func(x, y store.Agent) int {
		return cmp.Or(cmp.Compare(y.LastSeen, x.LastSeen), cmp.Compare(x.ID, y.ID))
	})
	for i, a := range offline[:min(len(offline), b.d.Limit)] {
		l.add("agents:offline", prio(pFleetOffline, i), fmt.Sprintf("Offline agent %d: last telemetry %s.", a.ID, ts(a.LastSeen)),
			l.host("agent", a.Name), l.site(a.Site))
	}

	// The fleet's hour of telemetry is the longest read (a row per agent
	// and interval): it runs beside the others.
	type talkersResult struct {
		rows []talker
		err  error
	}
	talked := make(chan talkersResult, 1)
	go func() {
		rows, err := b.agentTalkers(ctx, site, 0, now, b.d.Limit)
		talked <- talkersResult{rows, err}
	}()
	// Every return below waits for it: the read must not outlive Facts.
	wait := func() talkersResult { r := <-talked; talked <- r; return r }
	defer wait()
	if site == "" {
		// The hub's own capture belongs to no site.
		if err := b.capture(ctx, l, now); err != nil {
			return err
		}
	}
	if err := b.flowHosts(ctx, l, site, now); err != nil {
		return err
	}
	who := "every site"
	if site != "" {
		who = "the reader's site"
	}
	if err := b.deepTops(ctx, l, store.DeepScope{From: now - hour, Site: site}, who, pFleetProcs, pFleetDNS, pFleetL7); err != nil {
		return err
	}
	if err := b.alerts(ctx, l, "alerts", store.OpenAlertQuery{Site: site}, pFleetAlerts, pFleetOpenAlert, byID); err != nil {
		return err
	}
	if err := b.incidents(ctx, l, "incidents:open", site, 0, pFleetIncidents, byID); err != nil {
		return err
	}
	if err := b.deviceHealth(ctx, l, site, devices, now); err != nil {
		return err
	}
	r := wait()
	if r.err != nil {
		return r.err
	}
	l.talkers("agents:top_talkers", pFleetTalkers, r.rows, 0, byID)
	return nil
}

func siteField(site string) (f fieldT) {
	if site != "" {
		f = val("site", site)
	}
	return f
}

// talker is an agent's bytes over the last hour and its baseline.
type talker struct {
	id      int64
	in, out float64
	base    float64
	days    int
}

// agentTalkers returns the agents (of site, or agentID alone) by bytes
// over the hour ending at now, the most first, at most limit, with the
// mean of the same hour over the previous days that have samples. The
// fleet's hour is read once; the baselines only for the agents listed
// (a 1 000-agent fleet's 7 baseline hours are a million samples).
func (b *Builder) agentTalkers(ctx context.Context, site string, agentID int64, now int64, limit int) ([]talker, error) {
	ws := baselineWindows(now)
	var ids []int64
	if agentID > 0 {
		ids = []int64{agentID}
	}
	rows, err := b.d.Agents.AgentTrafficWindows(ctx, site, ids, ws[:1])
	if err != nil {
		return nil, err
	}
	interval := int64(b.d.Interval.Seconds())
	out := make([]talker, 0, len(rows))
	for _, r := range rows {
		in, o := r.Bytes(interval)
		if in+o > 0 {
			out = append(out, talker{id: r.AgentID, in: in, out: o})
		}
	}
	slices.SortStableFunc(out, func(x, y talker) int { return cmp.Or(cmp.Compare(y.in+y.out, x.in+x.out), cmp.Compare(x.id, y.id)) })
	out = out[:min(len(out), limit)]
	if len(out) == 0 {
		return out, nil
	}
	ids = ids[:0]
	idx := make(map[int64]int, len(out))
	for i, t := range out {
		ids = append(ids, t.id)
		idx[t.id] = i
	}
	base, err := b.d.Agents.AgentTrafficWindows(ctx, site, ids, ws[1:])
	if err != nil {
		return nil, err
	}
	for _, r := range base {
		in, o := r.Bytes(interval)
		t := &out[idx[r.AgentID]]
		t.base += in + o
		t.days++
	}
	for i := range out {
		if out[i].days > 0 {
			out[i].base /= float64(out[i].days)
		}
	}
	return out, nil
}

// talkers adds the agents' bytes (agentTalkers); agentID > 0 words it
// as one agent's traffic.
func (b *Builder) talkers(ctx context.Context, l *list, source string, top int, site string, agentID int64, byID map[int64]store.Agent, now int64) error {
	rows, err := b.agentTalkers(ctx, site, agentID, now, b.d.Limit)
	if err != nil {
		return err
	}
	l.talkers(source, top, rows, agentID, byID)
	return nil
}

func (l *list) talkers(source string, top int, rows []talker, agentID int64, byID map[int64]store.Agent) {
	for i, t := range rows {
		a := byID[t.id]
		text := fmt.Sprintf("Agent %d, rank %d by interface bytes over the last hour: %s in, %s out, %s in all; %s.",
			t.id, i+1, bytesText(t.in), bytesText(t.out), bytesText(t.in+t.out), change(t.in+t.out, t.base, t.days))
		if agentID > 0 {
			text = fmt.Sprintf("Interface bytes of agent %d over the last hour: %s in, %s out, %s in all; %s.",
				t.id, bytesText(t.in), bytesText(t.out), bytesText(t.in+t.out), change(t.in+t.out, t.base, t.days))
		}
		l.add(source, prio(top, i), text, l.host("agent", a.Name), l.site(a.Site))
	}
}

// capture adds the bytes of the hub's own capture over the last hour
// against the same hour of the previous days.
func (b *Builder) capture(ctx context.Context, l *list, now int64) error {
	var cur [2]float64
	var base float64
	var days, seconds int
	for i, w := range baselineWindows(now) {
		ms, err := b.d.Traffic.TrafficMinutes(ctx, w.From, w.To)
		if err != nil {
			return err
		}
		var in, out float64
		for _, m := range ms {
			in, out = in+float64(m.InBytes), out+float64(m.OutBytes)
			if i == 0 {
				seconds += int(m.Seconds)
			}
		}
		switch {
		case i == 0:
			cur = [2]float64{in, out}
		case len(ms) > 0:
			base += in + out
			days++
		}
	}
	if days > 0 {
		base /= float64(days)
	}
	if seconds == 0 && days == 0 {
		return nil // no capture on this hub
	}
	l.add("capture:traffic", pFleetCapture, fmt.Sprintf("The hub's own capture over the last hour (%d s captured): %s in, %s out, %s in all; %s.",
		seconds, bytesText(cur[0]), bytesText(cur[1]), bytesText(cur[0]+cur[1]), change(cur[0]+cur[1], base, days)))
	return nil
}

// flowHosts adds the addresses with the most flow bytes over the last
// hour, with their baselines.
func (b *Builder) flowHosts(ctx context.Context, l *list, site string, now int64) error {
	rows, err := b.d.Flows.FlowHostBytes(ctx, site, baselineWindows(now), nil, b.d.Limit)
	if err != nil {
		return err
	}
	type host struct {
		cur, base float64
		days      int
	}
	hs := map[string]*host{}
	var order []string
	for _, r := range rows {
		h := hs[r.Host]
		if h == nil {
			h = &host{}
			hs[r.Host] = h
			order = append(order, r.Host)
		}
		if r.Window == 0 {
			h.cur = float64(r.Octets)
		} else {
			h.base += float64(r.Octets)
			h.days++
		}
	}
	for i, name := range order {
		h := hs[name]
		if h.days > 0 {
			h.base /= float64(h.days)
		}
		l.add("flows:top_talkers", prio(pFleetHosts, i), fmt.Sprintf("Address rank %d by flow bytes (sent and received, from the exporters%s) over the last hour: %s; %s.",
			i+1, map[bool]string{true: "", false: " of the reader's site"}[site == ""], bytesText(h.cur), change(h.cur, h.base, h.days)),
			val("address", name))
	}
	return nil
}

// deepTops adds the top processes, DNS domains and SNI/Host names of s
// over the last hour; who names the scope in the text.
func (b *Builder) deepTops(ctx context.Context, l *list, s store.DeepScope, who string, pProc, pDNS, pL7 int) error {
	procs, err := b.d.Deep.TopProcesses(ctx, s, b.d.Limit)
	if err != nil {
		return err
	}
	for i, p := range procs {
		l.add("processes:top", prio(pProc, i), fmt.Sprintf("Process rank %d by bytes over the last hour (%s): %s in, %s out, on %d agents.",
			i+1, who, bytesText(float64(p.BytesIn)), bytesText(float64(p.BytesOut)), p.AgentCount), val("process", p.Process))
	}
	dns, err := b.d.Deep.TopDNS(ctx, s, b.d.Limit)
	if err != nil {
		return err
	}
	for i, d := range dns {
		l.add("dns:top_domains", prio(pDNS, i), fmt.Sprintf("DNS name rank %d by queries over the last hour (%s): %d queries, %d responses, from %d agents.",
			i+1, who, d.Queries, d.Responses, d.AgentCount), val("domain", d.Domain), val("process", d.Process))
	}
	l7, err := b.d.Deep.TopL7(ctx, s, b.d.Limit)
	if err != nil {
		return err
	}
	for i, h := range l7 {
		l.add("l7:top_hosts", prio(pL7, i), fmt.Sprintf("TLS SNI / HTTP Host rank %d by bytes over the last hour (%s): %s, %d connections seen, from %d agents.",
			i+1, who, bytesText(float64(h.Bytes)), h.Hits, h.AgentCount), val("host", h.Host), val("kind", h.Kind), val("process", h.Process))
	}
	return nil
}

// alerts adds the open alert counts by kind and severity (source
// prefix+":summary") and the most severe open events (prefix+":open").
func (b *Builder) alerts(ctx context.Context, l *list, prefix string, q store.OpenAlertQuery, pSum, pRows int, byID map[int64]store.Agent) error {
	counts, err := b.d.Alerts.OpenAlertCounts(ctx, q)
	if err != nil {
		return err
	}
	var total int64
	text := ""
	for _, c := range counts {
		total += c.Events
		text += fmt.Sprintf("; %s severity %d %s: %d events (%d firings)", word(c.Kind), c.Severity, word(c.State), c.Events, c.Repeats)
	}
	l.add(prefix+":summary", pSum, fmt.Sprintf("Open alert events (firing or acknowledged) by kind, severity and state: %d in all%s.", total, text))
	if total == 0 {
		return nil
	}
	evs, err := b.d.Alerts.TopOpenAlerts(ctx, q, b.d.Limit)
	if err != nil {
		return err
	}
	for i, e := range evs {
		l.alert(prefix+":open", prio(pRows, i), e, byID[e.AgentID].Name)
	}
	return nil
}

// alert adds one alert event.
func (l *list) alert(source string, p int, e record.AlertEvent, agentName string) {
	who := "no agent (the hub or a device)"
	if e.AgentID > 0 {
		who = fmt.Sprintf("agent %d", e.AgentID)
	}
	text := fmt.Sprintf("Alert event %d on %s: kind %s, severity %d, state %s, fired %d times, first %s, last %s", e.ID, who, word(e.Kind), e.Severity,
		word(e.State), e.Count, ts(e.TS), ts(e.LastTS))
	if e.GroupID > 0 {
		text += fmt.Sprintf(", incident %d", e.GroupID)
	}
	if e.ResolvedTS > 0 {
		text += ", resolved " + ts(e.ResolvedTS)
	}
	var kind, agent fieldT
	if word(e.Kind) == "other" {
		kind = val("kind", e.Kind)
	}
	if agentName != "" {
		agent = l.host("agent", agentName)
	}
	l.add(source, p, text+".", kind, agent, val("key", e.Key), val("message", e.Message), val("process", e.Process), l.site(e.Site), val("ticket", e.ExtRef))
}

// incidents adds the open incidents of site and agentID, the riskiest
// first, after a count.
func (b *Builder) incidents(ctx context.Context, l *list, source, site string, agentID int64, top int, byID map[int64]store.Agent) error {
	incs, total, err := b.d.Alerts.OpenIncidents(ctx, site, agentID, b.d.Limit)
	if err != nil {
		return err
	}
	l.add(source, top, fmt.Sprintf("Open incidents (open, acknowledged or investigating): %d in all; the riskiest follow.", total))
	for i, inc := range incs {
		l.incident(source, prio(top-1, i), inc, byID[inc.AgentID].Name)
	}
	return nil
}

// incident adds one incident.
func (l *list) incident(source string, p int, inc record.Incident, agentName string) {
	text := fmt.Sprintf("Incident %d: correlation rule %d, agent %d, state %s, severity %d, risk %d/100, opened %s, updated %s",
		inc.ID, inc.Rule, inc.AgentID, word(inc.State), inc.Severity, inc.Risk, ts(inc.OpenedTS), ts(inc.UpdatedTS))
	if inc.ClosedTS > 0 {
		text += ", closed " + ts(inc.ClosedTS)
	}
	var agent fieldT
	if agentName != "" {
		agent = l.host("agent", agentName)
	}
	l.add(source, p, text+".", val("title", inc.Title), agent, l.site(inc.Site))
}

// deviceHealth adds the devices' state: counts, the failing ones and the
// busiest interfaces.
func (b *Builder) deviceHealth(ctx context.Context, l *list, site string, devices []store.Device, now int64) error {
	var failing, stale, disabled, unmanaged int
	var bad []store.Device
	for _, d := range devices {
		switch {
		case !d.Enabled:
			disabled++
		case d.Host == "" && d.Vendor == "":
			unmanaged++
		case d.LastError != "":
			failing++
			bad = append(bad, d)
		case now-d.LastPoll > 3*int64(max(d.PollSeconds, 1)):
			stale++
			bad = append(bad, d)
		}
	}
	l.add("devices:health", pFleetDevices, fmt.Sprintf("Network devices: %d in all; %d whose last poll failed, %d not polled within 3 poll intervals, %d disabled, %d unmanaged (topology only).",
		len(devices), failing, stale, disabled, unmanaged))
	for i, d := range bad[:min(len(bad), b.d.Limit)] {
		state := "its last poll failed"
		if d.LastError == "" {
			state = "it was not polled within 3 poll intervals"
		}
		l.add("devices:unreachable", prio(pFleetDevices-1, i), fmt.Sprintf("Device %d: %s; last poll %s, polled every %d s.", d.ID, state, ts(d.LastPoll), d.PollSeconds),
			l.host("device", d.Name), val("kind", d.Kind), val("address", d.Host), val("last_error", d.LastError), l.site(d.Site))
	}
	ifs, err := b.d.Devices.BusiestIfaces(ctx, site, now-hour, b.d.Limit)
	if err != nil {
		return err
	}
	names := make(map[int64]store.Device, len(devices))
	for _, d := range devices {
		names[d.ID] = d
	}
	for i, f := range ifs {
		d := names[f.DeviceID]
		l.add("devices:interfaces", prio(pFleetIfaces, i), fmt.Sprintf("Interface rank %d by utilisation in the devices' last polls: device %d ifIndex %d, rx %s, tx %s (%s in, %s out), speed %s, %s, polled %s.",
			i+1, f.DeviceID, f.IfIndex, optPct(f.RxUtilPct), optPct(f.TxUtilPct), bitsText(f.RxBps*8), bitsText(f.TxBps*8), bitsText(float64(f.SpeedBps)), operText(f.OperUp), ts(f.TS)),
			l.host("device", d.Name), val("interface", f.Name), val("alias", f.Alias))
	}
	return nil
}

func operText(up bool) string {
	if up {
		return "oper up"
	}
	return "oper down"
}
