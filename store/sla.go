package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"netmon/store/record"
)

// SLA targets and the measurements of their metrics (app/reports owns
// the rule sla_breach and the enterprise report's SLA section). Every
// measurement is computed in SQL and returns per agent, device or
// interface sums, never raw rows: a 90-day window of 1 000 agents stays
// a few hundred rows on the wire.

// SLATables are the raw time series of this file, for the retention loop.
var SLATables = []string{"device_polls"}

// SLATarget is a stored SLA target (app/reports.SLATarget).
type SLATarget struct {
	ID          int64
	Name        string
	Metric      string
	Scope       string
	Site        string
	AgentID     int64
	DeviceID    int64
	Threshold   float64
	WindowHours int
	CreatedAt   int64
	CreatedBy   string
}

const slaTargetColumns = `id, name, metric, scope, site, agent_id, device_id, threshold, window_hours, created_at, created_by`

func scanSLATarget(r rowScanner) (SLATarget, error) {
	var s SLATarget
	err := r.Scan(&s.ID, &s.Name, &s.Metric, &s.Scope, &s.Site, &s.AgentID, &s.DeviceID, &s.Threshold, &s.WindowHours, &s.CreatedAt, &s.CreatedBy)
	return s, err
}

// InsertSLATarget stores a target in the transaction of its audit record
// and returns its id.
func (t *Tx) InsertSLATarget(ctx context.Context, s SLATarget) (int64, error) {
	const q = `INSERT INTO sla_targets (name, metric, scope, site, agent_id, device_id, threshold, window_hours, created_at, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`
	var id int64
	err := t.tx.QueryRowContext(ctx, q, cleanText(s.Name), s.Metric, s.Scope, s.Site, s.AgentID, s.DeviceID, s.Threshold,
		s.WindowHours, s.CreatedAt, cleanText(s.CreatedBy)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert sla target: %w", err)
	}
	return id, nil
}

// DeleteSLATarget deletes target id inside t and returns it as it was;
// an error wrapping ErrNotFound when there is none. site != "" deletes
// only a target of that site: another site's id is not found, exactly
// as a missing one.
func (t *Tx) DeleteSLATarget(ctx context.Context, site string, id int64) (SLATarget, error) {
	s, err := scanSLATarget(t.tx.QueryRowContext(ctx, `SELECT `+slaTargetColumns+` FROM sla_targets WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && site != "" && s.Site != site) {
		return SLATarget{}, fmt.Errorf("delete sla target %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return SLATarget{}, fmt.Errorf("delete sla target %d: %w", id, err)
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM sla_targets WHERE id = $1`, id); err != nil {
		return SLATarget{}, fmt.Errorf("delete sla target %d: %w", id, err)
	}
	return s, nil
}

// SLATargets lists the targets by id; site != "" keeps that site's.
func (db *DB) SLATargets(ctx context.Context, site string) ([]SLATarget, error) {
	q := `SELECT ` + slaTargetColumns + ` FROM sla_targets`
	var args []any
	if site != "" {
		q += ` WHERE site = $1`
		args = append(args, site)
	}
	rows, err := db.reader.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list sla targets: %w", err)
	}
	defer rows.Close()
	out := []SLATarget{}
	for rows.Next() {
		s, err := scanSLATarget(rows)
		if err != nil {
			return nil, fmt.Errorf("list sla targets: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// countPoll counts one device poll's outcome in its minute (SaveDevicePoll
// calls it in its transaction): the history of device_availability.
func countPoll(ctx context.Context, tx *sql.Tx, p record.DevicePoll) error {
	ok, failed := 1, 0
	if p.Err != "" {
		ok, failed = 0, 1
	}
	return addDevicePolls(ctx, tx, p.DeviceID, p.TS, ok, failed)
}

func addDevicePolls(ctx context.Context, x interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, device, ts int64, ok, failed int) error {
	const q = `INSERT INTO device_polls (device_id, ts, ok, failed) VALUES ($1, $2, $3, $4)
		ON CONFLICT (device_id, ts) DO UPDATE SET ok = device_polls.ok + excluded.ok, failed = device_polls.failed + excluded.failed`
	if _, err := x.ExecContext(ctx, q, device, ts-ts%60, ok, failed); err != nil {
		return fmt.Errorf("count device %d poll: %w", device, err)
	}
	return nil
}

// AddDevicePolls adds ok answered and failed unanswered polls to device's
// minute of ts (SaveDevicePoll counts each poll itself; this is for
// imports and tests).
func (db *DB) AddDevicePolls(ctx context.Context, device, ts int64, ok, failed int) error {
	return db.InTx(ctx, func(t *Tx) error { return addDevicePolls(ctx, t.tx, device, ts, ok, failed) })
}

// SLAScope narrows a measurement: Site "" is every site; AgentID or
// DeviceID (not 0) one agent or device.
type SLAScope struct {
	Site     string
	AgentID  int64
	DeviceID int64
}

// where appends the scope's conditions on the agents or devices table
// aliased alias, numbering parameters after args.
func (s SLAScope) where(alias string, id int64, args []any) (string, []any) {
	var q string
	if s.Site != "" {
		args = append(args, s.Site)
		q += ` AND ` + alias + `.site = $` + strconv.Itoa(len(args))
	}
	if id != 0 {
		args = append(args, id)
		q += ` AND ` + alias + `.id = $` + strconv.Itoa(len(args))
	}
	return q, args
}

// AgentMinutes is one agent's reporting over a window: Expected minutes
// of the window from its enrollment's minute on, Reported of them in
// which at least one telemetry batch was stored.
type AgentMinutes struct {
	AgentID  int64
	Expected int64
	Reported int64
}

// AgentUptime counts, per agent in scope, the minutes of [from, to)
// (both taken down to the minute) in which it reported: a minute counts
// when agent_samples holds a batch with ts in it. Minutes before the
// minute of the agent's enrollment are not expected; an agent enrolled
// at or after to is left out. By agent id.
func (db *DB) AgentUptime(ctx context.Context, scope SLAScope, from, to int64) ([]AgentMinutes, error) {
	from, to = from-from%60, to-to%60
	p, err := db.planReport(ctx, from, to)
	if err != nil {
		return nil, err
	}
	args := []any{from, to}
	cond, args := scope.where("a", scope.AgentID, args)
	// The minutes reported from the enrolment's minute E on: the live
	// ranges' distinct minutes, the rolled days' counts of the days
	// starting at or after E and, for a rolled day E falls inside, its
	// minutes from E on, live (report rollups, migration 0023).
	const e = `(a.enrolled_at - a.enrolled_at % 60)`
	q := `SELECT a.id, a.enrolled_at, COALESCE(x.n, 0) FROM agents a LEFT JOIN (SELECT id, SUM(n) AS n FROM (
			SELECT a.id, COUNT(DISTINCT s.ts - s.ts % 60) AS n FROM agents a JOIN agent_samples s ON s.agent_id = a.id
				WHERE ` + rangeCond("s.ts", p.live) + ` AND s.ts >= ` + e + ` GROUP BY a.id
			UNION ALL SELECT a.id, SUM(r.minutes) FROM agents a JOIN report_agent_rollup r ON r.agent_id = a.id
				WHERE ` + rangeCond("r.ts", p.rolled) + ` AND r.ts >= ` + e + ` GROUP BY a.id
			UNION ALL SELECT a.id, COUNT(DISTINCT s.ts - s.ts % 60) FROM agents a JOIN agent_samples s ON s.agent_id = a.id
				AND s.ts >= ` + e + ` AND s.ts < ` + e + ` - ` + e + ` % 86400 + 86400
				WHERE ` + rangeCond(e+` - `+e+` % 86400`, p.rolled) + ` AND ` + e + ` % 86400 <> 0 GROUP BY a.id
		) y GROUP BY id) x ON x.id = a.id
		WHERE a.enrolled_at < $2 AND CAST($1 AS BIGINT) = CAST($1 AS BIGINT)` + cond + ` ORDER BY a.id`
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("agent uptime: %w", err)
	}
	defer rows.Close()
	out := []AgentMinutes{}
	for rows.Next() {
		var m AgentMinutes
		var enrolled int64
		if err := rows.Scan(&m.AgentID, &enrolled, &m.Reported); err != nil {
			return nil, fmt.Errorf("agent uptime: %w", err)
		}
		start := max(from, enrolled-enrolled%60)
		m.Expected = (to - start) / 60
		if m.Expected > 0 {
			out = append(out, m)
		}
	}
	return out, rows.Err()
}

// DevicePollCount is one device's polls over a window.
type DevicePollCount struct {
	DeviceID int64
	OK       int64
	Failed   int64
}

// DevicePolls sums, per device in scope, the polls answered and not
// answered with ts in [from, to); devices not polled in it are left out.
// By device id.
func (db *DB) DevicePolls(ctx context.Context, scope SLAScope, from, to int64) ([]DevicePollCount, error) {
	args := []any{from, to}
	cond, args := scope.where("d", scope.DeviceID, args)
	q := `SELECT p.device_id, SUM(p.ok), SUM(p.failed) FROM device_polls p JOIN devices d ON d.id = p.device_id
		WHERE p.ts >= $1 AND p.ts < $2` + cond + ` GROUP BY p.device_id ORDER BY p.device_id`
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("device polls: %w", err)
	}
	defer rows.Close()
	out := []DevicePollCount{}
	for rows.Next() {
		var c DevicePollCount
		if err := rows.Scan(&c.DeviceID, &c.OK, &c.Failed); err != nil {
			return nil, fmt.Errorf("device polls: %w", err)
		}
		if c.OK+c.Failed > 0 {
			out = append(out, c)
		}
	}
	return out, rows.Err()
}

// IfaceP95 is one interface's 95th percentile of utilisation.
type IfaceP95 struct {
	DeviceID int64
	IfIndex  int64
	P95      float64
	// Samples is how many polls of the interface carried a utilisation.
	Samples int64
}

// IfaceUtilP95 returns, per interface of the devices in scope, the 95th
// percentile over the polls with ts in [from, to) of its utilisation %
// (a poll's utilisation is the busier direction's, rx_util_pct or
// tx_util_pct; polls where neither is known, for lack of a speed, are
// left out). The percentile is the nearest rank: the smallest value
// with at least 95 % of the samples at or below it (rank ⌈0.95·n⌉).
// Busiest first, then by device and ifIndex.
func (db *DB) IfaceUtilP95(ctx context.Context, scope SLAScope, from, to int64) ([]IfaceP95, error) {
	args := []any{from, to}
	cond, args := scope.where("d", scope.DeviceID, args)
	// rn is the nearest rank when rn >= 0.95 n > rn - 1, in integers.
	q := `WITH u AS (
			SELECT i.device_id, i.if_index, CASE WHEN i.tx_util_pct IS NULL THEN i.rx_util_pct
				WHEN i.rx_util_pct IS NULL THEN i.tx_util_pct
				WHEN i.rx_util_pct >= i.tx_util_pct THEN i.rx_util_pct ELSE i.tx_util_pct END AS util
			FROM device_ifaces i JOIN devices d ON d.id = i.device_id
			WHERE i.ts >= $1 AND i.ts < $2 AND (i.rx_util_pct IS NOT NULL OR i.tx_util_pct IS NOT NULL)` + cond + `
		), r AS (
			SELECT device_id, if_index, util,
				ROW_NUMBER() OVER (PARTITION BY device_id, if_index ORDER BY util) AS rn,
				COUNT(*) OVER (PARTITION BY device_id, if_index) AS n
			FROM u
		)
		SELECT device_id, if_index, util, n FROM r WHERE rn * 20 >= n * 19 AND (rn - 1) * 20 < n * 19
		ORDER BY util DESC, device_id, if_index`
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("interface utilisation p95: %w", err)
	}
	defer rows.Close()
	out := []IfaceP95{}
	for rows.Next() {
		var p IfaceP95
		if err := rows.Scan(&p.DeviceID, &p.IfIndex, &p.P95, &p.Samples); err != nil {
			return nil, fmt.Errorf("interface utilisation p95: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// CaptureDrops sums the hub capture's packets read and packets the kernel
// dropped over the minutes with ts in [from, to).
func (db *DB) CaptureDrops(ctx context.Context, from, to int64) (packets, dropped int64, err error) {
	err = db.reader.QueryRowContext(ctx, `SELECT COALESCE(SUM(packets), 0), COALESCE(SUM(dropped), 0) FROM traffic_minutes
		WHERE ts >= $1 AND ts < $2`, from, to).Scan(&packets, &dropped)
	if err != nil {
		return 0, 0, fmt.Errorf("capture drops: %w", err)
	}
	return packets, dropped, nil
}
