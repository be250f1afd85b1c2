package store

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"netmon/store/record"
)

// Reads of the AI assistant's facts (app/ai/facts, issue 32): the few
// aggregates no route needed before. Each takes a site ("" = every site)
// so a site-bound conversation never reads another site's rows, and
// each bounds its answer (limit) so the facts of a 1 000-agent fleet
// stay one query per list.

// TimeWindow is a half-open time range [From, To), Unix seconds.
type TimeWindow struct{ From, To int64 }

// windowSQL renders windows as a WHERE condition and a CASE giving the
// index of the window a row's ts falls in, with the bounds appended to
// args (numbered after them).
func windowSQL(col string, ws []TimeWindow, args []any) (cond, which string, _ []any) {
	var c, w strings.Builder
	w.WriteString("CASE")
	for i, tw := range ws {
		args = append(args, tw.From, tw.To)
		r := fmt.Sprintf("%[1]s >= $%[2]d AND %[1]s < $%[3]d", col, len(args)-1, len(args))
		if i > 0 {
			c.WriteString(" OR ")
		}
		c.WriteString("(" + r + ")")
		fmt.Fprintf(&w, " WHEN %s THEN %d", r, i)
	}
	w.WriteString(" END")
	if len(ws) == 1 {
		// One window: no CASE to evaluate per row.
		return c.String(), "0", args
	}
	return "(" + c.String() + ")", w.String(), args
}

// AgentWindowTraffic is one agent's telemetry samples (with a rate) in
// one window: the sums of their in and out rates (bytes/s), how many,
// and the first and last sample times. Bytes over the window are the
// rate sums times the mean interval between samples (see
// AgentWindowTraffic.Bytes).
type AgentWindowTraffic struct {
	AgentID       int64
	Window        int
	InSum, OutSum float64
	N             int64
	MinTS, MaxTS  int64
}

// Bytes estimates the bytes in and out over the window: each sample's
// rate holds since the batch before it, so the bytes are its rate times
// that interval; the mean interval (first to last sample over N-1) stands
// for each, or interval when there is a single sample.
func (a AgentWindowTraffic) Bytes(interval int64) (in, out float64) {
	dt := float64(interval)
	if a.N >= 2 && a.MaxTS > a.MinTS {
		dt = float64(a.MaxTS-a.MinTS) / float64(a.N-1)
	}
	return a.InSum * dt, a.OutSum * dt
}

// AgentTrafficWindows aggregates the agents' samples with a rate in each
// of windows, per agent and window, by agent then window; site keeps
// that site's agents, agentIDs (when not nil) those agents. Every sample
// of the windows is read: a fleet's hour is one row per agent and
// telemetry interval, so callers ask many windows for a few agents only.
func (db *DB) AgentTrafficWindows(ctx context.Context, site string, agentIDs []int64, windows []TimeWindow) ([]AgentWindowTraffic, error) {
	out := []AgentWindowTraffic{}
	if len(windows) == 0 || (agentIDs != nil && len(agentIDs) == 0) {
		return out, nil
	}
	cond, which, args := windowSQL("ts", windows, nil)
	where := ` WHERE has_rate AND ` + cond
	if agentIDs != nil {
		var b strings.Builder
		for i, id := range agentIDs {
			args = append(args, id)
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "$%d", len(args))
		}
		where += ` AND agent_id IN (` + b.String() + `)`
	}
	if site != "" {
		args = append(args, site)
		where += fmt.Sprintf(` AND agent_id IN (SELECT id FROM agents WHERE site = $%d)`, len(args))
	}
	q := `SELECT agent_id, w, SUM(rx_bps), SUM(tx_bps), COUNT(*), MIN(ts), MAX(ts)
		FROM (SELECT agent_id, ` + which + ` AS w, rx_bps, tx_bps, ts FROM agent_samples` + where + `) s
		GROUP BY agent_id, w ORDER BY agent_id, w`
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("agent traffic windows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a AgentWindowTraffic
		if err := rows.Scan(&a.AgentID, &a.Window, &a.InSum, &a.OutSum, &a.N, &a.MinTS, &a.MaxTS); err != nil {
			return nil, fmt.Errorf("agent traffic windows: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// HostWindowBytes is one address's flow octets (as source and as
// destination summed) in one window.
type HostWindowBytes struct {
	Host   string
	Window int
	Octets int64
}

// FlowHostBytes sums the stored flow minutes' octets per address (source
// or destination) in each of windows, for the limit busiest addresses of
// the first window (hosts nil) or for hosts, busiest first per window
// (ties by address); site keeps the exporters of that site's devices.
// The other rows (empty src) and the minutes not yet written are left out.
func (db *DB) FlowHostBytes(ctx context.Context, site string, windows []TimeWindow, hosts []string, limit int) ([]HostWindowBytes, error) {
	out := []HostWindowBytes{}
	if len(windows) == 0 {
		return out, nil
	}
	if hosts == nil {
		top, err := db.flowHostBytes(ctx, site, windows[:1], nil, limit)
		if err != nil || len(windows) == 1 || len(top) == 0 {
			return top, err
		}
		for _, h := range top {
			hosts = append(hosts, h.Host)
		}
		rest, err := db.flowHostBytes(ctx, site, windows[1:], hosts, 0)
		for i := range rest {
			rest[i].Window++
		}
		return append(top, rest...), err
	}
	return db.flowHostBytes(ctx, site, windows, hosts, limit)
}

func (db *DB) flowHostBytes(ctx context.Context, site string, windows []TimeWindow, hosts []string, limit int) ([]HostWindowBytes, error) {
	cond, which, args := windowSQL("ts", windows, nil)
	where := ` WHERE src <> '' AND ` + cond
	if site != "" {
		args = append(args, site)
		where += siteClause(site, len(args))
	}
	var hostCond string
	if len(hosts) > 0 {
		var b strings.Builder
		for i, h := range hosts {
			args = append(args, h)
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "$%d", len(args))
		}
		hostCond = ` WHERE h.host IN (` + b.String() + `)`
	}
	q := `SELECT h.host, h.w, SUM(h.o) FROM (
			SELECT src AS host, ` + which + ` AS w, octets AS o FROM flow_minutes` + where + `
			UNION ALL SELECT dst AS host, ` + which + ` AS w, octets AS o FROM flow_minutes` + where + `) h` + hostCond + `
		GROUP BY h.host, h.w ORDER BY h.w, SUM(h.o) DESC, h.host`
	if limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, limit)
	}
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("flow host bytes: %w", err)
	}
	defer rows.Close()
	out := []HostWindowBytes{}
	for rows.Next() {
		var h HostWindowBytes
		if err := rows.Scan(&h.Host, &h.Window, &h.Octets); err != nil {
			return nil, fmt.Errorf("flow host bytes: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// NewName is a process, destination or domain an agent reported for the
// first time (within the store's retention) at FirstTS; Total is its
// bytes (processes, destinations) or queries (domains) since.
type NewName struct {
	Name    string
	FirstTS int64
	Total   int64
}

// AgentNewNames lists what agent first reported at or after since,
// looking back to from (the retention's reach): processes (not
// "(unattributed)"), destinations ("proto ip:port" of a process, Name
// "process proto ip port") and DNS domains, the busiest first (ties by
// name), at most limit of each.
func (db *DB) AgentNewNames(ctx context.Context, agentID, from, since int64, limit int) (procs, dests, domains []NewName, err error) {
	const tail = ` HAVING MIN(ts) >= $3 ORDER BY 3 DESC, 1 LIMIT $4`
	procs, err = db.newNames(ctx, `SELECT process, MIN(ts), SUM(bytes_in + bytes_out) FROM agent_proc_minutes
		WHERE agent_id = $1 AND ts >= $2 AND process <> '(unattributed)' GROUP BY process`+tail, agentID, from, since, limit)
	if err != nil {
		return nil, nil, nil, err
	}
	dests, err = db.newNames(ctx, `SELECT process || ' ' || proto || ' ' || remote_ip || ' ' || CAST(remote_port AS TEXT), MIN(ts), SUM(bytes_in + bytes_out)
		FROM agent_remote_minutes WHERE agent_id = $1 AND ts >= $2 GROUP BY process, proto, remote_ip, remote_port`+tail, agentID, from, since, limit)
	if err != nil {
		return nil, nil, nil, err
	}
	domains, err = db.newNames(ctx, `SELECT domain, MIN(ts), SUM(queries) FROM agent_dns_minutes
		WHERE agent_id = $1 AND ts >= $2 GROUP BY domain`+tail, agentID, from, since, limit)
	return procs, dests, domains, err
}

func (db *DB) newNames(ctx context.Context, q string, args ...any) ([]NewName, error) {
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("agent new names: %w", err)
	}
	defer rows.Close()
	out := []NewName{}
	for rows.Next() {
		var n NewName
		if err := rows.Scan(&n.Name, &n.FirstTS, &n.Total); err != nil {
			return nil, fmt.Errorf("agent new names: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// AlertCount is how many open (firing or acknowledged) events there are
// of one kind, severity and state, and their repeats summed.
type AlertCount struct {
	Kind     string
	Severity int
	State    string
	Events   int64
	Repeats  int64
}

// OpenAlertQuery selects open alert events.
type OpenAlertQuery struct {
	// Site keeps that site's events ("" = all).
	Site string
	// AgentID > 0 keeps one agent's events.
	AgentID int64
	// DeviceID > 0 keeps the firewall-device rules' events of one device
	// (kinds vpn_down, sdwan_sla_breach, high_sessions; key "<id>" or
	// "<id>|…").
	DeviceID int64
}

func (q OpenAlertQuery) where() (string, []any) {
	w := ` WHERE state <> 'resolved'`
	var args []any
	if q.Site != "" {
		args = append(args, q.Site)
		w += fmt.Sprintf(` AND site = $%d`, len(args))
	}
	if q.AgentID > 0 {
		args = append(args, q.AgentID)
		w += fmt.Sprintf(` AND agent_id = $%d`, len(args))
	}
	if q.DeviceID > 0 {
		id := fmt.Sprint(q.DeviceID)
		args = append(args, id, id+"|%")
		w += fmt.Sprintf(` AND kind IN ('vpn_down', 'sdwan_sla_breach', 'high_sessions') AND (key = $%d OR key LIKE $%d)`, len(args)-1, len(args))
	}
	return w, args
}

// OpenAlertCounts counts the open events q selects by kind, severity and
// state: highest severity first, then most events, then kind and state.
func (db *DB) OpenAlertCounts(ctx context.Context, q OpenAlertQuery) ([]AlertCount, error) {
	w, args := q.where()
	rows, err := db.reader.QueryContext(ctx, `SELECT kind, severity, state, COUNT(*), SUM(count) FROM alert_events`+w+`
		GROUP BY kind, severity, state ORDER BY severity DESC, COUNT(*) DESC, kind, state`, args...)
	if err != nil {
		return nil, fmt.Errorf("open alert counts: %w", err)
	}
	defer rows.Close()
	out := []AlertCount{}
	for rows.Next() {
		var c AlertCount
		if err := rows.Scan(&c.Kind, &c.Severity, &c.State, &c.Events, &c.Repeats); err != nil {
			return nil, fmt.Errorf("open alert counts: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// TopOpenAlerts lists the open events q selects, highest severity first,
// then the latest to fire (last_ts, id descending), at most limit.
func (db *DB) TopOpenAlerts(ctx context.Context, q OpenAlertQuery, limit int) ([]record.AlertEvent, error) {
	w, args := q.where()
	args = append(args, limit)
	rows, err := db.reader.QueryContext(ctx, `SELECT `+alertEventColumns+` FROM alert_events`+w+
		fmt.Sprintf(` ORDER BY severity DESC, last_ts DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("top open alerts: %w", err)
	}
	defer rows.Close()
	out := []record.AlertEvent{}
	for rows.Next() {
		e, err := scanAlertEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("top open alerts: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// OpenIncidents lists the open incidents (open, ack, investigating) of
// site ("" = all) and agentID (0 = all), highest risk first (then
// severity, the latest updated, id), at most limit, and how many there
// are in all.
func (db *DB) OpenIncidents(ctx context.Context, site string, agentID int64, limit int) ([]record.Incident, int64, error) {
	w := ` WHERE state IN ('open', 'ack', 'investigating')`
	var args []any
	if site != "" {
		args = append(args, site)
		w += fmt.Sprintf(` AND site = $%d`, len(args))
	}
	if agentID > 0 {
		args = append(args, agentID)
		w += fmt.Sprintf(` AND agent_id = $%d`, len(args))
	}
	var total int64
	if err := db.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM incidents`+w, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("open incidents: %w", err)
	}
	args = append(args, limit)
	rows, err := db.reader.QueryContext(ctx, `SELECT `+incidentColumns+` FROM incidents`+w+
		fmt.Sprintf(` ORDER BY risk DESC, severity DESC, updated_ts DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("open incidents: %w", err)
	}
	defer rows.Close()
	out := []record.Incident{}
	for rows.Next() {
		i, err := scanIncident(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("open incidents: %w", err)
		}
		out = append(out, i)
	}
	return out, total, rows.Err()
}

// DeviceIfaceUtil is an interface of a device's latest poll with its
// busier direction's utilisation.
type DeviceIfaceUtil struct {
	DeviceID int64
	record.IfaceSample
	// UtilPct is the higher of rx and tx utilisation.
	UtilPct float64
}

// BusiestIfaces lists the interfaces of each device's (of site) latest
// poll at or after from whose utilisation is known, the highest first
// (ties by device and ifIndex), at most limit.
func (db *DB) BusiestIfaces(ctx context.Context, site string, from int64, limit int) ([]DeviceIfaceUtil, error) {
	args := []any{from}
	devCond := ``
	if site != "" {
		args = append(args, site)
		devCond = fmt.Sprintf(` AND device_id IN (SELECT id FROM devices WHERE site = $%d)`, len(args))
	}
	args = append(args, limit)
	q := `SELECT i.device_id, i.ts, i.if_index, i.name, i.alias, i.class, i.speed_bps, i.oper_up, i.rx_bps, i.tx_bps, i.rx_util_pct, i.tx_util_pct,
			CASE WHEN COALESCE(i.rx_util_pct, 0) >= COALESCE(i.tx_util_pct, 0) THEN COALESCE(i.rx_util_pct, 0) ELSE i.tx_util_pct END AS u
		FROM device_ifaces i JOIN (SELECT device_id, MAX(ts) AS ts FROM device_ifaces WHERE ts >= $1` + devCond + ` GROUP BY device_id) l
			ON l.device_id = i.device_id AND l.ts = i.ts
		WHERE (i.rx_util_pct IS NOT NULL OR i.tx_util_pct IS NOT NULL)
		ORDER BY u DESC, i.device_id, i.if_index LIMIT $` + fmt.Sprint(len(args))
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("busiest interfaces: %w", err)
	}
	defer rows.Close()
	out := []DeviceIfaceUtil{}
	for rows.Next() {
		var d DeviceIfaceUtil
		var speed int64
		if err := rows.Scan(&d.DeviceID, &d.TS, &d.IfIndex, &d.Name, &d.Alias, &d.Class, &speed, &d.OperUp, &d.RxBps, &d.TxBps,
			&d.RxUtilPct, &d.TxUtilPct, &d.UtilPct); err != nil {
			return nil, fmt.Errorf("busiest interfaces: %w", err)
		}
		d.IfaceSample.DeviceID, d.SpeedBps = d.DeviceID, uint64(speed)
		out = append(out, d)
	}
	return out, rows.Err()
}

// HostNames lists the names netmon knows of the hosts of site ("" = all
// sites): agent names, device names and sysNames, and device hosts that
// are names (not addresses), sorted, once each. The assistant registers
// them as host names so that free text naming them (an alert message, an
// interface alias) is pseudonymised too.
func (db *DB) HostNames(ctx context.Context, site string) ([]string, error) {
	var args []any
	w := ``
	if site != "" {
		args = append(args, site)
		w = ` WHERE site = $1`
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT name FROM agents`+w+`
		UNION SELECT name FROM devices`+w+` UNION SELECT sys_name FROM devices`+w+` UNION SELECT host FROM devices`+w, args...)
	if err != nil {
		return nil, fmt.Errorf("host names: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("host names: %w", err)
		}
		if _, err := netip.ParseAddr(n); n != "" && err != nil {
			out = append(out, n)
		}
	}
	// Sorted here: the databases' collations differ.
	slices.Sort(out)
	return out, rows.Err()
}
