package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Reports (issue 31): the schedules that mail reports and the archive of
// generated reports (migration 0021). A site argument of "" means every
// site; any other value restricts the statement to that site's rows, so
// another site's id answers ErrNotFound exactly as a missing one does.

// ReportSchedule is a stored report job.
type ReportSchedule struct {
	ID         int64
	Name       string
	Type       string
	Days       int
	Format     string
	Site       string
	Recipients []string
	Spec       string
	Timezone   string
	Enabled    bool
	// LastSlot is the Unix time of the last slot claimed (0: never).
	LastSlot   int64
	LastStatus string
	CreatedAt  int64
	CreatedBy  string
}

// ReportArchive is one archived report; Body is set by GetReportArchive
// only (lists carry the metadata).
type ReportArchive struct {
	ID          int64
	ScheduleID  int64
	Type        string
	Format      string
	Site        string
	Days        int
	From        int64
	To          int64
	Filename    string
	ContentType string
	Size        int64
	SHA256      string
	DataSHA256  string
	Delivery    string
	GeneratedAt int64
	GeneratedBy string
	Body        []byte
}

const scheduleCols = `id, name, type, days, format, site, recipients, spec, timezone, enabled, last_slot, last_status, created_at, created_by`

func scanSchedule(sc interface{ Scan(...any) error }) (ReportSchedule, error) {
	var (
		s       ReportSchedule
		rcpt    string
		enabled int64
	)
	if err := sc.Scan(&s.ID, &s.Name, &s.Type, &s.Days, &s.Format, &s.Site, &rcpt, &s.Spec, &s.Timezone,
		&enabled, &s.LastSlot, &s.LastStatus, &s.CreatedAt, &s.CreatedBy); err != nil {
		return s, err
	}
	s.Enabled = enabled != 0
	if err := json.Unmarshal([]byte(rcpt), &s.Recipients); err != nil {
		return s, fmt.Errorf("schedule %d recipients: %w", s.ID, err)
	}
	return s, nil
}

// InsertReportSchedule stores s (its ID is ignored) and returns the new
// id; inside t so its audit record commits with it.
func (t *Tx) InsertReportSchedule(ctx context.Context, s ReportSchedule) (int64, error) {
	rcpt, err := json.Marshal(s.Recipients)
	if err != nil {
		return 0, fmt.Errorf("insert report schedule: %w", err)
	}
	if s.Recipients == nil {
		rcpt = []byte("[]")
	}
	enabled := 0
	if s.Enabled {
		enabled = 1
	}
	var id int64
	err = t.tx.QueryRowContext(ctx, `INSERT INTO report_schedules
		(name, type, days, format, site, recipients, spec, timezone, enabled, last_slot, last_status, created_at, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
		s.Name, s.Type, s.Days, s.Format, s.Site, string(rcpt), s.Spec, s.Timezone, enabled, s.LastSlot, s.LastStatus,
		s.CreatedAt, s.CreatedBy).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert report schedule: %w", err)
	}
	return id, nil
}

// DeleteReportSchedule deletes schedule id of site ("" any site);
// ErrNotFound when there is none.
func (t *Tx) DeleteReportSchedule(ctx context.Context, site string, id int64) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM report_schedules WHERE id = $1 AND ($2 = '' OR site = $2)`, id, site)
	return affectedOne(res, err, "delete report schedule")
}

// ListReportSchedules returns the schedules of site ("" every site) by id.
func (db *DB) ListReportSchedules(ctx context.Context, site string) ([]ReportSchedule, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT `+scheduleCols+` FROM report_schedules
		WHERE $1 = '' OR site = $1 ORDER BY id`, site)
	if err != nil {
		return nil, fmt.Errorf("list report schedules: %w", err)
	}
	defer rows.Close()
	out := []ReportSchedule{}
	for rows.Next() {
		s, err := scanSchedule(rows)
		if err != nil {
			return nil, fmt.Errorf("list report schedules: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list report schedules: %w", err)
	}
	return out, nil
}

// GetReportSchedule returns schedule id of site ("" any site), or
// ErrNotFound.
func (db *DB) GetReportSchedule(ctx context.Context, site string, id int64) (ReportSchedule, error) {
	s, err := scanSchedule(db.reader.QueryRowContext(ctx, `SELECT `+scheduleCols+` FROM report_schedules
		WHERE id = $1 AND ($2 = '' OR site = $2)`, id, site))
	if errors.Is(err, sql.ErrNoRows) {
		return ReportSchedule{}, ErrNotFound
	}
	if err != nil {
		return ReportSchedule{}, fmt.Errorf("get report schedule %d: %w", id, err)
	}
	return s, nil
}

// ClaimReportSlot marks slot (Unix s) as taken by schedule id when no
// later or equal slot was taken before, in one statement: of any number
// of hubs (or restarts) claiming the same slot exactly one gets true, and
// only that one runs the slot. status is recorded with the claim.
func (db *DB) ClaimReportSlot(ctx context.Context, id, slot int64, status string) (bool, error) {
	release, err := db.take(ctx, true)
	if err != nil {
		return false, err
	}
	defer release()
	res, err := db.writer.ExecContext(ctx, `UPDATE report_schedules SET last_slot = $2, last_status = $3
		WHERE id = $1 AND enabled = 1 AND last_slot < $2`, id, slot, status)
	if err != nil {
		return false, fmt.Errorf("claim report slot %d of schedule %d: %w", slot, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim report slot %d of schedule %d: %w", slot, id, err)
	}
	return n == 1, nil
}

// SetReportScheduleStatus records the outcome of schedule id's last run.
func (db *DB) SetReportScheduleStatus(ctx context.Context, id int64, status string) error {
	release, err := db.take(ctx, true)
	if err != nil {
		return err
	}
	defer release()
	res, err := db.writer.ExecContext(ctx, `UPDATE report_schedules SET last_status = $2 WHERE id = $1`, id, status)
	return affectedOne(res, err, "set report schedule status")
}

// InsertReportArchive stores a (its ID is ignored) with its body and
// returns the new id; inside t so its audit record commits with it.
func (t *Tx) InsertReportArchive(ctx context.Context, a ReportArchive) (int64, error) {
	body := a.Body
	if body == nil {
		body = []byte{}
	}
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO report_archive
		(schedule_id, type, format, site, days, from_ts, to_ts, filename, content_type, size, sha256, data_sha256,
		 delivery, generated_at, generated_by, body)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
		a.ScheduleID, a.Type, a.Format, a.Site, a.Days, a.From, a.To, a.Filename, a.ContentType, int64(len(body)),
		a.SHA256, a.DataSHA256, a.Delivery, a.GeneratedAt, a.GeneratedBy, body).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert archived report: %w", err)
	}
	return id, nil
}

// DeleteReportArchive deletes archived report id of site ("" any site);
// ErrNotFound when there is none.
func (t *Tx) DeleteReportArchive(ctx context.Context, site string, id int64) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM report_archive WHERE id = $1 AND ($2 = '' OR site = $2)`, id, site)
	return affectedOne(res, err, "delete archived report")
}

const archiveCols = `id, schedule_id, type, format, site, days, from_ts, to_ts, filename, content_type, size, sha256,
	data_sha256, delivery, generated_at, generated_by`

func archiveDest(a *ReportArchive) []any {
	return []any{&a.ID, &a.ScheduleID, &a.Type, &a.Format, &a.Site, &a.Days, &a.From, &a.To, &a.Filename,
		&a.ContentType, &a.Size, &a.SHA256, &a.DataSHA256, &a.Delivery, &a.GeneratedAt, &a.GeneratedBy}
}

// ListReportArchive returns up to limit archived reports of site (""
// every site), newest first, without their bodies.
func (db *DB) ListReportArchive(ctx context.Context, site string, limit int) ([]ReportArchive, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT `+archiveCols+` FROM report_archive
		WHERE $1 = '' OR site = $1 ORDER BY generated_at DESC, id DESC LIMIT $2`, site, limit)
	if err != nil {
		return nil, fmt.Errorf("list archived reports: %w", err)
	}
	defer rows.Close()
	out := []ReportArchive{}
	for rows.Next() {
		var a ReportArchive
		if err := rows.Scan(archiveDest(&a)...); err != nil {
			return nil, fmt.Errorf("list archived reports: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list archived reports: %w", err)
	}
	return out, nil
}

// GetReportArchive returns archived report id of site ("" any site) with
// its body, or ErrNotFound.
func (db *DB) GetReportArchive(ctx context.Context, site string, id int64) (ReportArchive, error) {
	var a ReportArchive
	err := db.reader.QueryRowContext(ctx, `SELECT `+archiveCols+`, body FROM report_archive
		WHERE id = $1 AND ($2 = '' OR site = $2)`, id, site).Scan(append(archiveDest(&a), &a.Body)...)
	if errors.Is(err, sql.ErrNoRows) {
		return ReportArchive{}, ErrNotFound
	}
	if err != nil {
		return ReportArchive{}, fmt.Errorf("get archived report %d: %w", id, err)
	}
	return a, nil
}

// SetReportDelivery records how archived report id was mailed.
func (db *DB) SetReportDelivery(ctx context.Context, id int64, delivery string) error {
	release, err := db.take(ctx, true)
	if err != nil {
		return err
	}
	defer release()
	res, err := db.writer.ExecContext(ctx, `UPDATE report_archive SET delivery = $2 WHERE id = $1`, id, delivery)
	return affectedOne(res, err, "set report delivery")
}

// PruneReportArchive deletes the archived reports generated before
// before (Unix s) and, beyond the keep newest (keep <= 0: no bound),
// the older ones; it returns how many it deleted.
func (db *DB) PruneReportArchive(ctx context.Context, before int64, keep int) (int64, error) {
	release, err := db.take(ctx, true)
	if err != nil {
		return 0, err
	}
	defer release()
	res, err := db.writer.ExecContext(ctx, `DELETE FROM report_archive WHERE generated_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("prune archived reports: %w", err)
	}
	n, _ := res.RowsAffected()
	if keep > 0 {
		// SQLite needs a LIMIT before OFFSET (-1: none); PostgreSQL
		// refuses a negative LIMIT.
		q := `DELETE FROM report_archive WHERE id IN (
			SELECT id FROM report_archive ORDER BY generated_at DESC, id DESC LIMIT -1 OFFSET $1)`
		if db.dialect == Postgres {
			q = `DELETE FROM report_archive WHERE id IN (
			SELECT id FROM report_archive ORDER BY generated_at DESC, id DESC OFFSET $1)`
		}
		res, err = db.writer.ExecContext(ctx, q, keep)
		if err != nil {
			return n, fmt.Errorf("prune archived reports: %w", err)
		}
		m, _ := res.RowsAffected()
		n += m
	}
	return n, nil
}

// ReportArchiveSize returns the number of archived reports and the sum
// of their sizes in bytes.
func (db *DB) ReportArchiveSize(ctx context.Context) (count, bytes int64, err error) {
	err = db.reader.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM report_archive`).Scan(&count, &bytes)
	if err != nil {
		return 0, 0, fmt.Errorf("report archive size: %w", err)
	}
	return count, bytes, nil
}

// affectedOne turns an UPDATE/DELETE of one row into ErrNotFound when
// it touched none.
func affectedOne(res sql.Result, err error, doing string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
