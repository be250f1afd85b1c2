package store

import (
	"context"
	"fmt"
	"strings"
)

// SyslogQuery selects stored syslog events. The zero value of each field
// means "no filter"; the filters all apply together, in the database, so
// a page holds the newest matching rows however old they are (a filter
// over the newest N rows in the browser lost older matches).
type SyslogQuery struct {
	// Limit is the most rows returned (newest first); at least 1.
	Limit int
	// Before is the cursor: only rows with an id below it (0: from the
	// newest). Pass the last row's id of a page to get the next one.
	Before int64
	// From and To bound ts, Unix seconds, both inclusive (0: open).
	From, To int64
	// MaxSeverity keeps severities 0..MaxSeverity (this one and worse);
	// negative or above 7: no filter.
	MaxSeverity int
	// Severities keeps exactly these severities (empty: no filter).
	Severities []int
	// Host and Tag match the whole field, ignoring ASCII case.
	Host, Tag string
	// Text is a substring of the message, ignoring ASCII case.
	Text string
	// Site limits the rows to the sources that are devices of this site.
	Site string
}

// QuerySyslog returns the newest events matching q, newest (highest id)
// first.
func (db *DB) QuerySyslog(ctx context.Context, q SyslogQuery) ([]SyslogRow, error) {
	if q.Limit < 1 {
		q.Limit = 1
	}
	var where []string
	args := []any{q.Limit}
	add := func(clause string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(clause, len(args)))
	}
	if q.Before > 0 {
		add(`id < $%d`, q.Before)
	}
	if q.From > 0 {
		add(`ts >= $%d`, q.From)
	}
	if q.To > 0 {
		add(`ts <= $%d`, q.To)
	}
	if q.MaxSeverity >= 0 && q.MaxSeverity < 7 {
		add(`severity <= $%d`, q.MaxSeverity)
	}
	if len(q.Severities) > 0 {
		ph := make([]string, 0, len(q.Severities))
		for _, s := range q.Severities {
			args = append(args, s)
			ph = append(ph, fmt.Sprintf("$%d", len(args)))
		}
		where = append(where, `severity IN (`+strings.Join(ph, ", ")+`)`)
	}
	// LOWER on both sides: SQLite's = is case-sensitive and PostgreSQL's
	// LIKE too; LOWER folds ASCII on SQLite (all of it on PostgreSQL), the
	// same on both for the host names and tags syslog carries.
	if q.Host != "" {
		add(`LOWER(host) = LOWER($%d)`, q.Host)
	}
	if q.Tag != "" {
		add(`LOWER(tag) = LOWER($%d)`, q.Tag)
	}
	if q.Text != "" {
		add(`LOWER(message) LIKE LOWER($%d) ESCAPE '\'`, "%"+likeEscaper.Replace(q.Text)+"%")
	}
	if q.Site != "" {
		add(`source IN (SELECT host FROM devices WHERE site = $%d AND host <> '')`, q.Site)
	}
	sqlText := `SELECT id, ts, host, severity, tag, message, facility, source, raw FROM syslog_events`
	if len(where) > 0 {
		sqlText += ` WHERE ` + strings.Join(where, ` AND `)
	}
	sqlText += ` ORDER BY id DESC LIMIT $1`
	rows, err := db.reader.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, fmt.Errorf("query syslog: %w", err)
	}
	defer rows.Close()
	out := []SyslogRow{}
	for rows.Next() {
		var r SyslogRow
		if err := rows.Scan(&r.ID, &r.TS, &r.Host, &r.Severity, &r.Tag, &r.Message, &r.Facility, &r.Source, &r.Raw); err != nil {
			return nil, fmt.Errorf("query syslog: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
