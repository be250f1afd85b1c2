package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ComplianceRecord is one row of the compliance log (issue 21). The
// encoding and the chain are app/compliance's; the store keeps the bytes.
type ComplianceRecord struct {
	Seq  uint64
	At   int64
	TS   int64
	Kind uint8
	Vals []byte
	Salt []byte
	Hash []byte
}

// ComplianceCheckpoint is one signed statement (hourly or daily).
type ComplianceCheckpoint struct {
	ID        int64
	Kind      string // "hourly" or "daily"
	Period    int64  // the hour's or the day's first second, Unix
	Body      string
	Sig       []byte
	Hash      []byte
	TSAToken  []byte
	TSAStatus string
	WORM      string
}

// complianceChunk is how many records go in between two looks for a
// waiting priority writer.
const complianceChunk = 2048

// AppendCompliance inserts records (already chained by the caller) as bulk
// ingest. It returns how many are committed, also on error.
func (db *DB) AppendCompliance(ctx context.Context, rs []ComplianceRecord) (int, error) {
	n, err := db.ingest(ctx, len(rs), complianceChunk, func(tx *sql.Tx, from, to int) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO compliance_records (seq, at, ts, kind, vals, salt, hash) VALUES ($1, $2, $3, $4, $5, $6, $7)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i := from; i < to; i++ {
			r := &rs[i]
			if _, err := stmt.ExecContext(ctx, int64(r.Seq), r.At, r.TS, int(r.Kind), r.Vals, r.Salt, r.Hash); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("append compliance records: %w", err)
	}
	return n, nil
}

// ComplianceHead returns the last record (zero value and ErrNotFound when
// the log is empty).
func (db *DB) ComplianceHead(ctx context.Context) (ComplianceRecord, error) {
	var r ComplianceRecord
	var seq int64
	err := db.reader.QueryRowContext(ctx, `SELECT seq, at, ts, kind, hash FROM compliance_records ORDER BY seq DESC LIMIT 1`).Scan(&seq, &r.At, &r.TS, &r.Kind, &r.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("compliance head: %w", ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("compliance head: %w", err)
	}
	r.Seq = uint64(seq)
	return r, nil
}

// ComplianceCount returns the number of stored records.
func (db *DB) ComplianceCount(ctx context.Context) (int64, error) {
	var n int64
	if err := db.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM compliance_records`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count compliance records: %w", err)
	}
	return n, nil
}

// ScanCompliance calls fn for every record with from <= seq <= to (to 0:
// no bound), in seq order, without holding them all in memory.
func (db *DB) ScanCompliance(ctx context.Context, from, to uint64, fn func(ComplianceRecord) error) error {
	if to == 0 {
		to = 1<<63 - 1
	}
	// Pages by seq keep a read transaction short on either engine.
	const page = 8192
	next := from
	for next <= to {
		rows, err := db.reader.QueryContext(ctx, `SELECT seq, at, ts, kind, vals, salt, hash FROM compliance_records WHERE seq >= $1 AND seq <= $2 ORDER BY seq LIMIT $3`, int64(next), int64(to), page)
		if err != nil {
			return fmt.Errorf("scan compliance records: %w", err)
		}
		got := 0
		for rows.Next() {
			var r ComplianceRecord
			var seq int64
			if err := rows.Scan(&seq, &r.At, &r.TS, &r.Kind, &r.Vals, &r.Salt, &r.Hash); err != nil {
				rows.Close()
				return fmt.Errorf("scan compliance records: %w", err)
			}
			r.Seq = uint64(seq)
			got++
			next = r.Seq + 1
			if err := fn(r); err != nil {
				rows.Close()
				return err
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("scan compliance records: %w", err)
		}
		if got < page {
			return nil
		}
	}
	return nil
}

// ComplianceSeqRange returns the first and last seq of records appended in
// [fromAt, toAt) (ErrNotFound when none).
func (db *DB) ComplianceSeqRange(ctx context.Context, fromAt, toAt int64) (uint64, uint64, error) {
	var lo, hi sql.NullInt64
	err := db.reader.QueryRowContext(ctx, `SELECT MIN(seq), MAX(seq) FROM compliance_records WHERE at >= $1 AND at < $2`, fromAt, toAt).Scan(&lo, &hi)
	if err != nil {
		return 0, 0, fmt.Errorf("compliance seq range: %w", err)
	}
	if !lo.Valid {
		return 0, 0, fmt.Errorf("compliance seq range: %w", ErrNotFound)
	}
	return uint64(lo.Int64), uint64(hi.Int64), nil
}

// AddComplianceCheckpoint stores a signed statement; ids are given in
// order by the single writer.
func (db *DB) AddComplianceCheckpoint(ctx context.Context, c ComplianceCheckpoint) (int64, error) {
	release, err := db.take(ctx, true)
	if err != nil {
		return 0, err
	}
	defer release()
	var id int64
	err = db.withTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM compliance_checkpoints`).Scan(&id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO compliance_checkpoints (id, kind, period, body, sig, hash, tsa_token, tsa_status, worm) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			id, c.Kind, c.Period, c.Body, c.Sig, c.Hash, c.TSAToken, c.TSAStatus, c.WORM)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("add compliance checkpoint: %w", err)
	}
	return id, nil
}

// SetComplianceStamp records a daily seal's timestamp token and status, and
// its WORM state.
func (db *DB) SetComplianceStamp(ctx context.Context, id int64, token []byte, status, worm string) error {
	if _, err := db.exec(ctx, `UPDATE compliance_checkpoints SET tsa_token = $1, tsa_status = $2, worm = $3 WHERE id = $4`, token, status, worm, id); err != nil {
		return fmt.Errorf("set compliance stamp: %w", err)
	}
	return nil
}

// ListComplianceCheckpoints returns the statements with fromPeriod <=
// period < toPeriod in id order (kind "" for both kinds).
func (db *DB) ListComplianceCheckpoints(ctx context.Context, kind string, fromPeriod, toPeriod int64) ([]ComplianceCheckpoint, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, kind, period, body, sig, hash, tsa_token, tsa_status, worm FROM compliance_checkpoints
		WHERE ($1 = '' OR kind = $1) AND period >= $2 AND period < $3 ORDER BY id`, kind, fromPeriod, toPeriod)
	if err != nil {
		return nil, fmt.Errorf("list compliance checkpoints: %w", err)
	}
	defer rows.Close()
	var out []ComplianceCheckpoint
	for rows.Next() {
		var c ComplianceCheckpoint
		if err := rows.Scan(&c.ID, &c.Kind, &c.Period, &c.Body, &c.Sig, &c.Hash, &c.TSAToken, &c.TSAStatus, &c.WORM); err != nil {
			return nil, fmt.Errorf("list compliance checkpoints: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list compliance checkpoints: %w", err)
	}
	return out, nil
}

// LastComplianceCheckpoint returns the newest statement of kind (""
// for either), ErrNotFound when none.
func (db *DB) LastComplianceCheckpoint(ctx context.Context, kind string) (ComplianceCheckpoint, error) {
	cs, err := db.lastCheckpoints(ctx, kind, 1)
	if err != nil {
		return ComplianceCheckpoint{}, err
	}
	if len(cs) == 0 {
		return ComplianceCheckpoint{}, fmt.Errorf("last compliance checkpoint: %w", ErrNotFound)
	}
	return cs[0], nil
}

// PendingComplianceStamps returns the daily seals whose timestamp is not
// yet "ok" (and a TSA is configured), oldest first.
func (db *DB) PendingComplianceStamps(ctx context.Context) ([]ComplianceCheckpoint, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, kind, period, body, sig, hash, tsa_token, tsa_status, worm FROM compliance_checkpoints
		WHERE kind = 'daily' AND tsa_status LIKE 'error:%' ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("pending compliance stamps: %w", err)
	}
	defer rows.Close()
	var out []ComplianceCheckpoint
	for rows.Next() {
		var c ComplianceCheckpoint
		if err := rows.Scan(&c.ID, &c.Kind, &c.Period, &c.Body, &c.Sig, &c.Hash, &c.TSAToken, &c.TSAStatus, &c.WORM); err != nil {
			return nil, fmt.Errorf("pending compliance stamps: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (db *DB) lastCheckpoints(ctx context.Context, kind string, n int) ([]ComplianceCheckpoint, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, kind, period, body, sig, hash, tsa_token, tsa_status, worm FROM compliance_checkpoints
		WHERE ($1 = '' OR kind = $1) ORDER BY id DESC LIMIT $2`, kind, n)
	if err != nil {
		return nil, fmt.Errorf("last compliance checkpoints: %w", err)
	}
	defer rows.Close()
	var out []ComplianceCheckpoint
	for rows.Next() {
		var c ComplianceCheckpoint
		if err := rows.Scan(&c.ID, &c.Kind, &c.Period, &c.Body, &c.Sig, &c.Hash, &c.TSAToken, &c.TSAStatus, &c.WORM); err != nil {
			return nil, fmt.Errorf("last compliance checkpoints: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// PruneCompliance deletes records appended before at (the
// -compliance-retention-days cut). Checkpoints are kept: they are small
// and prove what the deleted days held.
func (db *DB) PruneCompliance(ctx context.Context, before int64) (int64, error) {
	res, err := db.ExecBulk(ctx, `DELETE FROM compliance_records WHERE at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("prune compliance records: %w", err)
	}
	return res.RowsAffected()
}

// ComplianceReview is an auditor's or an operator's periodic review
// (spec 2.12): kind "log" or "access", period YYYY-MM.
type ComplianceReview struct {
	ID      int64  `json:"id"`
	TS      int64  `json:"ts"`
	Author  string `json:"author"`
	Kind    string `json:"kind"`
	Period  string `json:"period"`
	Notes   string `json:"notes"`
	Finding string `json:"finding"`
}

// InsertComplianceReview stores a review inside the transaction that also
// appends its audit record; it returns the new id.
func (t *Tx) InsertComplianceReview(ctx context.Context, r ComplianceReview) (int64, error) {
	var id int64
	if err := t.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM compliance_reviews`).Scan(&id); err != nil {
		return 0, fmt.Errorf("insert compliance review: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO compliance_reviews (id, ts, author, kind, period, notes, finding) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		id, r.TS, cleanText(r.Author), r.Kind, r.Period, cleanText(r.Notes), cleanText(r.Finding)); err != nil {
		return 0, fmt.Errorf("insert compliance review: %w", err)
	}
	return id, nil
}

// ListComplianceReviews returns the newest limit reviews, newest first.
func (db *DB) ListComplianceReviews(ctx context.Context, limit int) ([]ComplianceReview, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, ts, author, kind, period, notes, finding FROM compliance_reviews ORDER BY id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list compliance reviews: %w", err)
	}
	defer rows.Close()
	out := []ComplianceReview{}
	for rows.Next() {
		var r ComplianceReview
		if err := rows.Scan(&r.ID, &r.TS, &r.Author, &r.Kind, &r.Period, &r.Notes, &r.Finding); err != nil {
			return nil, fmt.Errorf("list compliance reviews: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ISMSRecord is one ISMS register entry (app/compliance/isms.go): Data is
// the entry's JSON, Ref its key within the kind (an asset or risk id, or
// the Annex A control id of an SoA line).
type ISMSRecord struct {
	ID        int64
	Kind      string
	Ref       string
	Data      string
	UpdatedAt int64
	UpdatedBy string
}

// ErrISMSRefTaken is returned when kind+ref exists already.
var ErrISMSRefTaken = errors.New("ref already used")

// InsertISMS stores a new entry in the transaction of its audit record.
func (t *Tx) InsertISMS(ctx context.Context, r ISMSRecord) (int64, error) {
	var n int
	if err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM isms_records WHERE kind = $1 AND ref = $2`, r.Kind, r.Ref).Scan(&n); err != nil {
		return 0, fmt.Errorf("insert isms record: %w", err)
	}
	if n > 0 {
		return 0, fmt.Errorf("insert isms record: %w", ErrISMSRefTaken)
	}
	var id int64
	if err := t.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM isms_records`).Scan(&id); err != nil {
		return 0, fmt.Errorf("insert isms record: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO isms_records (id, kind, ref, data, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5, $6)`,
		id, r.Kind, cleanText(r.Ref), r.Data, r.UpdatedAt, cleanText(r.UpdatedBy)); err != nil {
		return 0, fmt.Errorf("insert isms record: %w", err)
	}
	return id, nil
}

// UpdateISMS replaces an entry's data and returns the previous version
// (ErrNotFound when kind has no such id).
func (t *Tx) UpdateISMS(ctx context.Context, r ISMSRecord) (ISMSRecord, error) {
	var old ISMSRecord
	err := t.tx.QueryRowContext(ctx, `SELECT id, kind, ref, data, updated_at, updated_by FROM isms_records WHERE id = $1 AND kind = $2`, r.ID, r.Kind).
		Scan(&old.ID, &old.Kind, &old.Ref, &old.Data, &old.UpdatedAt, &old.UpdatedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return old, fmt.Errorf("update isms record: %w", ErrNotFound)
	}
	if err != nil {
		return old, fmt.Errorf("update isms record: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE isms_records SET data = $1, updated_at = $2, updated_by = $3 WHERE id = $4`,
		r.Data, r.UpdatedAt, cleanText(r.UpdatedBy), r.ID); err != nil {
		return old, fmt.Errorf("update isms record: %w", err)
	}
	return old, nil
}

// ListISMS returns the entries of kind by ref.
func (db *DB) ListISMS(ctx context.Context, kind string) ([]ISMSRecord, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, kind, ref, data, updated_at, updated_by FROM isms_records WHERE kind = $1 ORDER BY ref, id`, kind)
	if err != nil {
		return nil, fmt.Errorf("list isms records: %w", err)
	}
	defer rows.Close()
	out := []ISMSRecord{}
	for rows.Next() {
		var r ISMSRecord
		if err := rows.Scan(&r.ID, &r.Kind, &r.Ref, &r.Data, &r.UpdatedAt, &r.UpdatedBy); err != nil {
			return nil, fmt.Errorf("list isms records: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
