package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The settings table holds small named documents (a key and a text value,
// usually JSON) that later features use for their configuration.

// GetSetting returns the value stored under key, or an error wrapping
// ErrNotFound when there is none.
func (db *DB) GetSetting(ctx context.Context, key string) (string, error) {
	const q = `SELECT value FROM settings WHERE key = $1`
	var value string
	err := db.reader.QueryRowContext(ctx, q, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("get setting %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("get setting %q: %w", key, err)
	}
	return value, nil
}

const putSetting = `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
	ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`

// PutSetting stores value under key, replacing any previous value, and
// stamps it with the current time.
func (db *DB) PutSetting(ctx context.Context, key, value string) error {
	if _, err := db.exec(ctx, putSetting, key, value, time.Now().Unix()); err != nil {
		return fmt.Errorf("put setting %q: %w", key, err)
	}
	return nil
}

// PutSetting is DB.PutSetting inside t (a change committed with its
// audit record).
func (t *Tx) PutSetting(ctx context.Context, key, value string) error {
	if _, err := t.tx.ExecContext(ctx, putSetting, key, value, time.Now().Unix()); err != nil {
		return fmt.Errorf("put setting %q: %w", key, err)
	}
	return nil
}

// PutSettingOnce stores value under key unless a value is there already,
// and returns the value now under key: value itself (stored true) or the
// one found. Two callers racing on an absent key cannot both store: the
// loser gets the winner's value.
func (db *DB) PutSettingOnce(ctx context.Context, key, value string) (current string, stored bool, err error) {
	res, err := db.exec(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`,
		key, value, time.Now().Unix())
	if err != nil {
		return "", false, fmt.Errorf("put setting %q once: %w", key, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return "", false, fmt.Errorf("put setting %q once: %w", key, err)
	} else if n == 1 {
		return value, true, nil
	}
	current, err = db.GetSetting(ctx, key)
	return current, false, err
}

// SwapSetting is a compare-and-swap of the row under key inside t: it
// stores value only if the row still holds old (nil: only if there is no
// row), and otherwise returns an error wrapping ErrConflict. A
// read-modify-write of a document shared by several hubs on one database
// cannot lose another hub's change this way: the second writer's swap
// finds the first one's value and fails (on PostgreSQL the UPDATE waits
// for the first transaction and re-reads the row). Comparing the value
// itself needs no version column: a writer whose old equals the current
// value computed its change from the current state.
func (t *Tx) SwapSetting(ctx context.Context, key string, old *string, value string) error {
	now := time.Now().Unix()
	var (
		res sql.Result
		err error
	)
	if old == nil {
		res, err = t.tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO NOTHING`, key, value, now)
	} else {
		res, err = t.tx.ExecContext(ctx, `UPDATE settings SET value = $1, updated_at = $2 WHERE key = $3 AND value = $4`, value, now, key, *old)
	}
	if err != nil {
		return fmt.Errorf("swap setting %q: %w", key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("swap setting %q: %w", key, err)
	}
	if n != 1 {
		return fmt.Errorf("swap setting %q: %w", key, ErrConflict)
	}
	return nil
}
