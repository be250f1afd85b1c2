package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The audit chain (spec 2.10, 6.5; RELIABILITY cases 14 and 17). Every
// record carries the hash of the one before it and its own hash over its
// content, ids run 1, 2, 3, ... without gaps, and the settings table keeps
// the head (last id and hash), so an edited, deleted, reordered or
// inserted row, or a truncated tail, makes VerifyAudit name the first bad
// record. The chain is unkeyed: someone with write access to the database
// who recomputes every hash after his change, head included, is not
// detected here; signed checkpoints (RELIABILITY case 15) are the layer
// for that.

// AuditGenesis is the prev_hash of the first record: 64 zeros.
const AuditGenesis = "0000000000000000000000000000000000000000000000000000000000000000"

// auditHeadKey is the settings key holding the chain's head, "<id>:<hash>".
const auditHeadKey = "audit.head"

// auditLockKey is the pg_advisory_xact_lock key serialising appends on
// PostgreSQL ("nmaudit" in ASCII), distinct from the migrations' key.
const auditLockKey int64 = 0x6e6d6175646974

// defaultAuditLimit is the page size when AuditFilter.Limit is not
// positive (spec section 8: audit limit 100).
const defaultAuditLimit = 100

// AuditActor is who acted, as an AuditEvent records it. The services that
// describe their actions (app/auth, app/fleet) and app/audit, which builds
// the records, share it through the store's vocabulary: services do not
// import each other.
type AuditActor struct {
	Username  string
	Role      string
	ActorType string
}

// AuditEvent is one record of the audit chain, with the field names of
// spec 2.10. The v2 fields are optional; a record whose v2 fields are all
// empty hashes as a v1 record, so records written before v2 still verify.
type AuditEvent struct {
	// ID is the record's position in the chain, from 1, set by the append.
	ID int64 `json:"id"`
	// TS is the time of the event in Unix seconds; the append sets it to
	// now when zero.
	TS int64 `json:"ts"`
	// Username is the acting identity (for a failed login, the name tried).
	Username string `json:"username"`
	// Role is the actor's role at the time.
	Role string `json:"role"`
	// Action names what was done, dotted ("user.create", "ai.provider.update").
	Action string `json:"action"`
	// Target is the resource acted on ("users/7", "devices/42").
	Target string `json:"target"`
	// Detail is free text or JSON about the action, secrets masked.
	Detail string `json:"detail"`
	// IP is the client address as trusted by the API (not a raw header).
	IP string `json:"ip"`
	// PrevHash is the Hash of record ID-1, AuditGenesis for record 1; set
	// by the append.
	PrevHash string `json:"prev_hash"`
	// Hash is AuditHash of the record, set by the append.
	Hash string `json:"hash"`
	// ActorType is user, legacy, token or oidc (v2).
	ActorType string `json:"actor_type,omitempty"`
	// RequestID is the request's X-Request-Id (v2).
	RequestID string `json:"request_id,omitempty"`
	// UserAgent is the client's User-Agent (v2).
	UserAgent string `json:"user_agent,omitempty"`
	// Result is ok, error or denied (v2).
	Result string `json:"result,omitempty"`
	// BeforeJSON is the resource before the change, secrets masked (v2).
	BeforeJSON string `json:"before_json,omitempty"`
	// AfterJSON is the resource after the change, secrets masked (v2).
	AfterJSON string `json:"after_json,omitempty"`
}

// v2 reports whether any v2 field is filled.
func (e AuditEvent) v2() bool {
	return e.ActorType != "" || e.RequestID != "" || e.UserAgent != "" ||
		e.Result != "" || e.BeforeJSON != "" || e.AfterJSON != ""
}

// AuditHash returns the hash of e: lowercase hex SHA-256 of a canonical
// encoding of its fields. The encoding is a compatibility promise (stored
// hashes are recomputed by every later version and by external verifiers)
// and must never change:
//
// the concatenation of netstrings, "<decimal byte length>:<bytes>,", of,
// in order: id and ts in decimal (no leading zeros or plus sign, "-" when
// negative), username, role, action, target, detail, ip, prev_hash; then,
// only when at least one of them is non-empty, actor_type, request_id,
// user_agent, result, before_json, after_json. The hash field itself is
// not included. Strings are taken as their UTF-8 bytes, unchanged.
//
// For example id 1, ts 1700000000, username "admin", action "login", the
// rest empty and prev_hash AuditGenesis encode as
// 1:1,10:1700000000,5:admin,0:,5:login,0:,0:,0:,64:000...000, (64 zeros).
// Length prefixes make the encoding unambiguous without escaping: a
// character moved from one field to the next changes the bytes hashed.
func AuditHash(e AuditEvent) string {
	fields := []string{
		strconv.FormatInt(e.ID, 10), strconv.FormatInt(e.TS, 10),
		e.Username, e.Role, e.Action, e.Target, e.Detail, e.IP, e.PrevHash,
	}
	if e.v2() {
		fields = append(fields, e.ActorType, e.RequestID, e.UserAgent, e.Result, e.BeforeJSON, e.AfterJSON)
	}
	var buf []byte
	for _, f := range fields {
		buf = strconv.AppendInt(buf, int64(len(f)), 10)
		buf = append(buf, ':')
		buf = append(buf, f...)
		buf = append(buf, ',')
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// cleanText makes s storable as TEXT on both engines: PostgreSQL refuses
// invalid UTF-8 and NUL bytes, and a client-chosen User-Agent carrying one
// must not make the audit write, and with it the audited change, fail.
// Each invalid sequence and each NUL becomes U+FFFD; this happens before
// hashing, so the hash covers exactly what is stored.
func cleanText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// auditHead is the chain's head as recorded in settings.
type auditHead struct {
	id   int64
	hash string
}

// readAuditHead reads audit.head through q. A missing or malformed value
// counts as the head of an empty chain (0, AuditGenesis): if rows exist,
// VerifyAudit then reports the chain broken at 1.
func readAuditHead(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (auditHead, error) {
	var value string
	err := q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = $1`, auditHeadKey).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return auditHead{0, AuditGenesis}, nil
	}
	if err != nil {
		return auditHead{}, fmt.Errorf("read audit head: %w", err)
	}
	idText, hash, ok := strings.Cut(value, ":")
	id, perr := strconv.ParseInt(idText, 10, 64)
	if !ok || perr != nil || id <= 0 {
		return auditHead{0, AuditGenesis}, nil
	}
	return auditHead{id, hash}, nil
}

// AppendAudit appends e to the chain inside t, so that the change it
// records and the record commit or roll back together (RELIABILITY case
// 17). It sets ID, PrevHash, Hash and, when zero, TS, replaces invalid
// UTF-8 and NUL bytes in the text fields by U+FFFD (see cleanText), and
// returns the record as stored.
//
// The new record links to the head recorded in settings rather than to
// the last row of the table: were the tail deleted, linking to the last
// remaining row would heal the chain at the next append and erase the
// evidence. Its id is one past the larger of the head's id and the
// table's last id, so it never collides with a row written outside the
// chain; either discrepancy stays visible to VerifyAudit.
func (t *Tx) AppendAudit(ctx context.Context, e AuditEvent) (AuditEvent, error) {
	// Appends must be serialised, or two could link to the same head. On
	// SQLite the transaction already holds the database's write lock
	// (single writer connection, BEGIN IMMEDIATE); on PostgreSQL a
	// transaction-scoped advisory lock does it, released at commit or
	// rollback, after which the next holder's reads see this commit.
	if t.dialect == Postgres {
		if _, err := t.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, auditLockKey); err != nil {
			return AuditEvent{}, fmt.Errorf("append audit event: lock chain: %w", err)
		}
	}
	head, err := readAuditHead(ctx, t.tx)
	if err != nil {
		return AuditEvent{}, fmt.Errorf("append audit event: %w", err)
	}
	var lastID int64
	if err := t.tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM audit_events`).Scan(&lastID); err != nil {
		return AuditEvent{}, fmt.Errorf("append audit event: read last id: %w", err)
	}

	for _, f := range []*string{&e.Username, &e.Role, &e.Action, &e.Target, &e.Detail, &e.IP,
		&e.ActorType, &e.RequestID, &e.UserAgent, &e.Result, &e.BeforeJSON, &e.AfterJSON} {
		*f = cleanText(*f)
	}
	e.ID = max(head.id, lastID) + 1
	e.PrevHash = head.hash
	if e.TS == 0 {
		e.TS = time.Now().Unix()
	}
	e.Hash = AuditHash(e)

	const insert = `INSERT INTO audit_events (id, ts, username, role, action, target, detail, ip, prev_hash, hash,
		actor_type, request_id, user_agent, result, before_json, after_json)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`
	if _, err := t.tx.ExecContext(ctx, insert, e.ID, e.TS, e.Username, e.Role, e.Action, e.Target, e.Detail, e.IP,
		e.PrevHash, e.Hash, e.ActorType, e.RequestID, e.UserAgent, e.Result, e.BeforeJSON, e.AfterJSON); err != nil {
		return AuditEvent{}, fmt.Errorf("append audit event %q: %w", e.Action, err)
	}
	const putHead = `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
	if _, err := t.tx.ExecContext(ctx, putHead, auditHeadKey, strconv.FormatInt(e.ID, 10)+":"+e.Hash, time.Now().Unix()); err != nil {
		return AuditEvent{}, fmt.Errorf("append audit event %q: store head: %w", e.Action, err)
	}
	return e, nil
}

// AppendAudit appends e to the chain in a transaction of its own, for
// events that accompany no change (a failed login, a permission denial).
// See Tx.AppendAudit.
func (db *DB) AppendAudit(ctx context.Context, e AuditEvent) (AuditEvent, error) {
	var out AuditEvent
	err := db.InTx(ctx, func(t *Tx) error {
		var err error
		out, err = t.AppendAudit(ctx, e)
		return err
	})
	return out, err
}

// AuditFilter selects audit records for ListAudit. Zero fields do not
// filter. The API validates and bounds Limit.
type AuditFilter struct {
	// Limit is the maximum number of records returned; 100 when <= 0.
	Limit int
	// Actor matches Username exactly.
	Actor string
	// Action matches exactly or, when it ends in "*", as a prefix
	// ("ai.provider.*"); case-sensitive.
	Action string
	// Target matches a substring of Target, ignoring ASCII case.
	Target string
	// IP matches exactly.
	IP string
	// Result matches exactly (ok, error, denied).
	Result string
	// From and To bound TS, inclusive; 0 leaves that side open.
	From, To int64
}

// auditColumns lists the columns in the order scanAudit reads them.
const auditColumns = `id, ts, username, role, action, target, detail, ip, prev_hash, hash,
	actor_type, request_id, user_agent, result, before_json, after_json`

// scanAudit reads one row selected with auditColumns.
func scanAudit(rows *sql.Rows) (AuditEvent, error) {
	var e AuditEvent
	err := rows.Scan(&e.ID, &e.TS, &e.Username, &e.Role, &e.Action, &e.Target, &e.Detail, &e.IP, &e.PrevHash,
		&e.Hash, &e.ActorType, &e.RequestID, &e.UserAgent, &e.Result, &e.BeforeJSON, &e.AfterJSON)
	return e, err
}

// likeEscaper and globEscaper quote the pattern characters of LIKE (with
// ESCAPE '\') and of SQLite's GLOB, so user input matches literally.
var (
	likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	globEscaper = strings.NewReplacer(`[`, `[[]`, `*`, `[*]`, `?`, `[?]`)
)

// ListAudit returns the records f selects, newest first, and an empty
// slice when none do.
func (db *DB) ListAudit(ctx context.Context, f AuditFilter) ([]AuditEvent, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Actor != "" {
		add("username = $%d", f.Actor)
	}
	if prefix, ok := strings.CutSuffix(f.Action, "*"); ok {
		// A case-sensitive prefix match that can use the action index:
		// SQLite's LIKE ignores case and skips the index, its GLOB does
		// neither; PostgreSQL's LIKE is case-sensitive.
		if db.dialect == SQLite {
			add("action GLOB $%d", globEscaper.Replace(prefix)+"*")
		} else {
			add(`action LIKE $%d ESCAPE '\'`, likeEscaper.Replace(prefix)+"%")
		}
	} else if f.Action != "" {
		add("action = $%d", f.Action)
	}
	if f.Target != "" {
		// LOWER on both sides, so both engines ignore case alike.
		add(`LOWER(target) LIKE LOWER($%d) ESCAPE '\'`, "%"+likeEscaper.Replace(f.Target)+"%")
	}
	if f.IP != "" {
		add("ip = $%d", f.IP)
	}
	if f.Result != "" {
		add("result = $%d", f.Result)
	}
	if f.From != 0 {
		add("ts >= $%d", f.From)
	}
	if f.To != 0 {
		add("ts <= $%d", f.To)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultAuditLimit
	}

	q := `SELECT ` + auditColumns + ` FROM audit_events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	q += fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args))

	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	defer rows.Close()
	out := []AuditEvent{}
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, fmt.Errorf("list audit events: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	return out, nil
}

// AuditVerify is the result of VerifyAudit (spec 2.10).
type AuditVerify struct {
	// OK is true when the whole chain verified.
	OK bool `json:"ok"`
	// BrokenAt is the id of the first bad record, 0 when OK: the database
	// was altered from there on.
	BrokenAt int64 `json:"broken_at"`
	// Checked is the number of records examined.
	Checked int64 `json:"checked"`
}

// VerifyAudit walks the chain in id order and reports the first bad
// record: a missing id (the first id absent), a prev_hash that is not the
// previous record's hash, or a hash that does not match the record's
// content. When every row is good it compares the last row with the head
// recorded by the appends: a head further on means the tail was deleted
// (broken at the first missing id), a head behind means rows were added
// outside the chain (broken at the first of them), and a different hash at
// the same id means the last record was rewritten.
//
// Rows are streamed, not loaded, and read in one read-only snapshot
// together with the head, so appends running meanwhile do not show as a
// truncated or overlong chain.
func (db *DB) VerifyAudit(ctx context.Context) (AuditVerify, error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if db.dialect == Postgres {
		// READ COMMITTED would give each statement its own snapshot.
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := db.reader.BeginTx(ctx, opts)
	if err != nil {
		return AuditVerify{}, fmt.Errorf("verify audit chain: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }() // read-only: nothing to commit

	// On SQLite the snapshot starts at the transaction's first read.
	head, err := readAuditHead(ctx, tx)
	if err != nil {
		return AuditVerify{}, fmt.Errorf("verify audit chain: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_events ORDER BY id`)
	if err != nil {
		return AuditVerify{}, fmt.Errorf("verify audit chain: %w", err)
	}
	defer rows.Close()

	var res AuditVerify
	last := auditHead{0, AuditGenesis}
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return AuditVerify{}, fmt.Errorf("verify audit chain: %w", err)
		}
		res.Checked++
		switch {
		case e.ID != last.id+1:
			res.BrokenAt = last.id + 1
		case e.PrevHash != last.hash, AuditHash(e) != e.Hash:
			res.BrokenAt = e.ID
		}
		if res.BrokenAt != 0 {
			break
		}
		last = auditHead{e.ID, e.Hash}
	}
	if err := rows.Err(); err != nil {
		return AuditVerify{}, fmt.Errorf("verify audit chain: %w", err)
	}
	if res.BrokenAt == 0 {
		switch {
		case head.id > last.id:
			res.BrokenAt = last.id + 1
		case head.id < last.id:
			res.BrokenAt = head.id + 1
		case head.hash != last.hash:
			res.BrokenAt = last.id
		}
	}
	res.OK = res.BrokenAt == 0
	return res, nil
}
