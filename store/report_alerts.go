package store

import (
	"context"
	"fmt"
)

// Alert, incident and agent reads of the reports' builder (see
// report_reads.go for the conventions).

// alertSite keeps the scope's site of a table with a site column.
func (s ReportScope) alertSite() string {
	if s.Site == "" {
		return ""
	}
	return ` AND site = $3`
}

// ReportAlertKinds is the alert events raised in the window by kind:
// keys kind; sums events, repeats (the events' counts summed). Most
// events first, ties by kind.
func (db *DB) ReportAlertKinds(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	q := `SELECT kind, COUNT(*), SUM(count), COUNT(*) OVER () FROM alert_events
		WHERE ts >= $1 AND ts < $2` + s.alertSite() + `
		GROUP BY kind ORDER BY COUNT(*) DESC, kind LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "alert kinds", 1, 2, q, s.args()...)
}

// ReportAlertSeverities is the alert events raised in the window by
// severity (0-10): keys severity; sums events. Highest severity first.
func (db *DB) ReportAlertSeverities(ctx context.Context, s ReportScope) (ReportTop, error) {
	q := `SELECT CAST(severity AS TEXT), COUNT(*), COUNT(*) OVER () FROM alert_events
		WHERE ts >= $1 AND ts < $2` + s.alertSite() + `
		GROUP BY severity ORDER BY severity DESC`
	return db.reportTop(ctx, "alert severities", 1, 1, q, s.args()...)
}

// ReportAlertKeys is the alert events raised in the window by kind and
// key: keys kind, key; sums events, repeats, highest severity. Most
// events first, ties by kind, key.
func (db *DB) ReportAlertKeys(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	q := `SELECT kind, key, COUNT(*), SUM(count), MAX(severity), COUNT(*) OVER () FROM alert_events
		WHERE ts >= $1 AND ts < $2` + s.alertSite() + `
		GROUP BY kind, key ORDER BY COUNT(*) DESC, kind, key LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "alert keys", 2, 3, q, s.args()...)
}

// ReportUnacked counts the alert events raised in the window, of at
// least minSeverity, still firing (neither acknowledged nor resolved).
func (db *DB) ReportUnacked(ctx context.Context, s ReportScope, minSeverity int) (int64, error) {
	var n int64
	q := `SELECT COUNT(*) FROM alert_events WHERE ts >= $1 AND ts < $2` + s.alertSite() +
		fmt.Sprintf(` AND state = 'firing' AND severity >= %d`, minSeverity)
	if err := db.reader.QueryRowContext(ctx, q, s.args()...).Scan(&n); err != nil {
		return 0, fmt.Errorf("report unacknowledged alerts: %w", err)
	}
	return n, nil
}

// ReportOpenIncidents is the incidents open now (open, ack,
// investigating) opened before the window's end: keys id, title, state;
// sums severity, risk, opened (Unix s). Highest severity first, then
// oldest.
func (db *DB) ReportOpenIncidents(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	args, site := []any{s.To}, ""
	if s.Site != "" {
		args, site = append(args, s.Site), ` AND site = $2`
	}
	q := `SELECT CAST(id AS TEXT), title, state, severity, risk, opened_ts, COUNT(*) OVER () FROM incidents
		WHERE state IN ('open', 'ack', 'investigating') AND opened_ts < $1` + site + `
		ORDER BY severity DESC, opened_ts, id LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "open incidents", 3, 3, q, args...)
}

// ReportAgentUptime lists the agents of the scope enrolled before the
// window's end by the share of the window (from their enrolment when
// later) they reported a sample in, lowest first: keys name; sums uptime
// in thousandths of a percent (99 500 = 99.5 %), minutes reported.
func (db *DB) ReportAgentUptime(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	p, err := db.planReport(ctx, s.From, s.To)
	if err != nil {
		return ReportTop{}, err
	}
	site := ""
	if s.Site != "" {
		site = ` AND a.site = $3`
	}
	// The minutes reported: the rolled days' per-agent counts and the
	// live ranges' distinct minutes (a minute lies in one day).
	q := `SELECT a.name, u.pm, u.n, COUNT(*) OVER () FROM (
			SELECT a.id, COALESCE(x.n, 0) AS n,
				CAST(COALESCE(x.n, 0) * 6000000 / ($2 - CASE WHEN a.enrolled_at > $1 THEN a.enrolled_at ELSE $1 END) AS BIGINT) AS pm
			FROM agents a LEFT JOIN (SELECT agent_id, SUM(n) AS n FROM (
				SELECT agent_id, minutes AS n FROM report_agent_rollup WHERE ` + rangeCond("ts", p.rolled) + `
				UNION ALL SELECT agent_id, COUNT(DISTINCT ts - ts % 60) FROM agent_samples
				WHERE ` + rangeCond("ts", p.live) + ` GROUP BY agent_id) y GROUP BY agent_id) x ON x.agent_id = a.id
			WHERE a.enrolled_at < $2` + site + `) u JOIN agents a ON a.id = u.id
		ORDER BY u.pm, a.name LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "agent uptime", 1, 2, q, s.args()...)
}
