package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Leases (issue 33, migration 0025): several hubs sharing one database
// elect the replica that runs the once-only loops with a row per lease
// name and a fencing counter, not advisory locks (a session lock is lost
// or leaked silently through a connection pool, and SQLite has none).
//
// Every statement takes the caller's clock (Unix ms): the replicas'
// clocks must agree within the renew period (NTP keeps them within
// milliseconds), since a replica takes an expired lease by its own clock.

// ErrFenced is returned (wrapped) by Fence and CheckFence when the lease
// no longer carries the caller's token or has expired: another replica
// took over, or may at any moment, so the write must not happen. Callers
// test it with errors.Is.
var ErrFenced = errors.New("fenced: this replica no longer holds the lease")

// leaseAcquire takes the lease name for holder in one statement: it
// inserts the row when there is none, and otherwise updates it only when
// the lease is already holder's (a renewal: the token stays) or has
// expired (a takeover: the token goes up by one). The right-hand sides of
// SET read the row as it was, on both engines. Of concurrent callers
// exactly one gets a row back: PostgreSQL serializes them on the row (a
// waiting INSERT re-checks the WHERE against the winner's committed row),
// SQLite on its single writer.
const leaseAcquire = `INSERT INTO leases (name, holder, token, expires_at, renewed_at)
	VALUES ($1, $2, 1, $3, $4)
	ON CONFLICT (name) DO UPDATE SET
		token = CASE WHEN leases.holder = excluded.holder THEN leases.token ELSE leases.token + 1 END,
		holder = excluded.holder,
		expires_at = excluded.expires_at,
		renewed_at = excluded.renewed_at
	WHERE leases.holder = excluded.holder OR leases.expires_at <= excluded.renewed_at
	RETURNING token`

// AcquireLease takes or renews the lease name for holder until now+ttl
// and returns its fencing token; ok is false (with no error) while
// another holder's lease has not expired. A renewal keeps the token; a
// takeover from another holder, or after a release, raises it by one.
func (db *DB) AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (token int64, ok bool, err error) {
	if name == "" || holder == "" {
		return 0, false, fmt.Errorf("acquire lease: empty name or holder")
	}
	if ttl <= 0 {
		return 0, false, fmt.Errorf("acquire lease %q: ttl must be positive, got %s", name, ttl)
	}
	release, err := db.take(ctx, true)
	if err != nil {
		return 0, false, err
	}
	defer release()
	ms := now.UnixMilli()
	err = db.writer.QueryRowContext(ctx, leaseAcquire, name, holder, ms+ttl.Milliseconds(), ms).Scan(&token)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("acquire lease %q for %q: %w", name, holder, err)
	}
	return token, true, nil
}

// ReleaseLease gives the lease up when holder still holds it with token,
// so another replica takes it at its next attempt instead of waiting for
// the expiry; the token stays (the next holder raises it). Releasing a
// lease already lost is no error.
func (db *DB) ReleaseLease(ctx context.Context, name, holder string, token int64) error {
	if _, err := db.exec(ctx, `UPDATE leases SET holder = '', expires_at = 0
		WHERE name = $1 AND holder = $2 AND token = $3`, name, holder, token); err != nil {
		return fmt.Errorf("release lease %q of %q: %w", name, holder, err)
	}
	return nil
}

// LeaseHolder returns the lease name's holder ("" when released), token
// and expiry, or ErrNotFound when it was never taken. An expired lease
// still names its last holder.
func (db *DB) LeaseHolder(ctx context.Context, name string) (holder string, token int64, expires time.Time, err error) {
	var ms int64
	err = db.reader.QueryRowContext(ctx, `SELECT holder, token, expires_at FROM leases WHERE name = $1`, name).
		Scan(&holder, &token, &ms)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", 0, time.Time{}, fmt.Errorf("lease %q: %w", name, ErrNotFound)
	case err != nil:
		return "", 0, time.Time{}, fmt.Errorf("read lease %q: %w", name, err)
	}
	return holder, token, time.UnixMilli(ms), nil
}

// CheckFence returns ErrFenced unless the lease name still carries token
// and has not expired. Outside a transaction it is advisory only (the
// lease may pass right after it answers): a write checks with Tx.Fence.
func (db *DB) CheckFence(ctx context.Context, name string, token int64) error {
	var n int
	err := db.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM leases WHERE name = $1 AND token = $2 AND expires_at > $3`,
		name, token, time.Now().UnixMilli()).Scan(&n)
	if err != nil {
		return fmt.Errorf("check lease %q: %w", name, err)
	}
	if n == 0 {
		return fmt.Errorf("lease %q token %d: %w", name, token, ErrFenced)
	}
	return nil
}

// Fence returns ErrFenced unless the lease name still carries token and
// has not expired (by this host's clock), so the caller returns the error
// and its transaction rolls back: a paused old leader's write is refused.
// Call it last, just before the commit.
//
// What keeps the lease from passing between the check and the commit:
// on SQLite the transaction holds the database's write lock from its
// start, so a takeover waits for the commit. On PostgreSQL the check
// locks the lease row FOR SHARE, so a takeover's update waits for the
// commit too; and it sets idle_in_transaction_session_timeout to the
// lease's remaining time, so a holder paused inside the transaction
// (SIGSTOP, a stalled VM) is disconnected by the server when its lease
// runs out, its transaction rolled back and the row unlocked for the
// next holder. A fenced transaction should be short: while it holds the
// lock, the lease is not renewed either.
func (t *Tx) Fence(ctx context.Context, name string, token int64) error {
	q := `SELECT expires_at FROM leases WHERE name = $1 AND token = $2 AND expires_at > $3`
	if t.dialect == Postgres {
		// set_config(..., true) is SET LOCAL: it ends with the transaction.
		q = `SELECT expires_at, set_config('idle_in_transaction_session_timeout', (expires_at - $3)::text, true)
			FROM leases WHERE name = $1 AND token = $2 AND expires_at > $3 FOR SHARE`
	}
	rows, err := t.tx.QueryContext(ctx, q, name, token, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("fence lease %q: %w", name, err)
	}
	found := rows.Next()
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("fence lease %q: %w", name, err)
	}
	if !found {
		return fmt.Errorf("lease %q token %d: %w", name, token, ErrFenced)
	}
	return nil
}
