package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"netmon/store/record"
)

// FlowTables and SyslogTables are the raw time series of this file, for
// the retention loop.
var (
	FlowTables   = []string{"flow_minutes", "flow_hours", "flow_hour_state"}
	SyslogTables = []string{"syslog_events"}
)

// syslogChunk is how many syslog rows are inserted between two looks for
// a waiting priority writer (a few milliseconds of work).
const syslogChunk = 1024

// WriteSyslog inserts syslog events as bulk ingest (see DB.ingest). It
// returns how many of es are committed, also on error: retry only the
// rest.
func (db *DB) WriteSyslog(ctx context.Context, es []record.SyslogEvent) (int, error) {
	n, err := db.ingest(ctx, len(es), syslogChunk, func(tx *sql.Tx, from, to int) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO syslog_events (ts, host, source, severity, facility, tag, message, raw) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i := from; i < to; i++ {
			e := &es[i]
			src := ""
			if e.Source.IsValid() {
				src = e.Source.String()
			}
			var raw any // NULL for a clean message: it costs nothing
			if e.Raw != nil {
				raw = e.Raw
			}
			if _, err := stmt.ExecContext(ctx, e.TS, cleanText(e.Host), src, int(e.Severity), int(e.Facility), cleanText(e.Tag), cleanText(e.Message), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("write syslog: %w", err)
	}
	return n, nil
}

// SyslogRow is a stored syslog event (spec 2.11).
type SyslogRow struct {
	ID       int64  `json:"id"`
	TS       int64  `json:"ts"`
	Host     string `json:"host"`
	Severity int    `json:"severity"`
	Tag      string `json:"tag"`
	Message  string `json:"message"`
	Facility int    `json:"facility"`
	Source   string `json:"source"`
	// Raw is the datagram as received when it held bytes the text columns
	// cannot (invalid UTF-8, NUL: U+FFFD in the text), base64 in JSON;
	// nil, and absent from JSON, for a clean message.
	Raw []byte `json:"raw_b64,omitempty" jsonschema:"description=the datagram as received (base64) when invalid UTF-8 or NUL bytes were replaced in host/tag/message; absent otherwise"`
}

// ListSyslog returns the newest events (id < before when before > 0,
// ts >= since), limited to a site's devices when site is set: QuerySyslog
// without the other filters.
func (db *DB) ListSyslog(ctx context.Context, limit int, before int64, since int64, site string) ([]SyslogRow, error) {
	return db.QuerySyslog(ctx, SyslogQuery{Limit: limit, Before: before, From: since, MaxSeverity: -1, Site: site})
}

// SaveFlowTemplates replaces the stored templates with ts.
func (db *DB) SaveFlowTemplates(ctx context.Context, ts []record.FlowTemplate) error {
	return db.InTx(ctx, func(wtx *Tx) error {
		tx := wtx.SQL()
		if _, err := tx.ExecContext(ctx, `DELETE FROM flow_templates`); err != nil {
			return err
		}
		now := time.Now().Unix()
		for _, t := range ts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO flow_templates (exporter, domain, id, version, body, updated_at) VALUES ($1, $2, $3, $4, $5, $6)`,
				t.Exporter, t.Domain, t.ID, t.Version, t.Body, now); err != nil {
				return fmt.Errorf("save flow template: %w", err)
			}
		}
		return nil
	})
}

// FlowTemplates returns the stored templates.
func (db *DB) FlowTemplates(ctx context.Context) ([]record.FlowTemplate, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT exporter, domain, id, version, body FROM flow_templates ORDER BY exporter, domain, id`)
	if err != nil {
		return nil, fmt.Errorf("read flow templates: %w", err)
	}
	defer rows.Close()
	var out []record.FlowTemplate
	for rows.Next() {
		var t record.FlowTemplate
		if err := rows.Scan(&t.Exporter, &t.Domain, &t.ID, &t.Version, &t.Body); err != nil {
			return nil, fmt.Errorf("read flow templates: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
