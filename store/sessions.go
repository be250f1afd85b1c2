package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Session is a signed-in session kept in the database (-session-store=db),
// so that several hubs share it. Only the SHA-256 of the token is stored.
// UserID is 0 for sessions of the legacy password.
type Session struct {
	TokenHash string
	UserID    int64
	Username  string
	Role      string
	Site      string
	ActorType string
	CreatedAt int64
	ExpiresAt int64
}

const createSession = `INSERT INTO sessions (token_hash, user_id, username, role, site, actor_type, created_at, expires_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

// CreateSession stores s.
func (db *DB) CreateSession(ctx context.Context, s Session) error {
	if _, err := db.exec(ctx, createSession, s.TokenHash, s.UserID, s.Username, s.Role, s.Site, s.ActorType, s.CreatedAt, s.ExpiresAt); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// CreateSession stores s inside t, so that a login's session and its audit
// record commit together.
func (t *Tx) CreateSession(ctx context.Context, s Session) error {
	if _, err := t.tx.ExecContext(ctx, createSession, s.TokenHash, s.UserID, s.Username, s.Role, s.Site, s.ActorType, s.CreatedAt, s.ExpiresAt); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// GetSession returns the session whose token hashes to hash, expired or not
// (the caller decides); ErrNotFound when none.
func (db *DB) GetSession(ctx context.Context, hash string) (Session, error) {
	const q = `SELECT token_hash, user_id, username, role, site, actor_type, created_at, expires_at FROM sessions WHERE token_hash = $1`
	var s Session
	err := db.reader.QueryRowContext(ctx, q, hash).Scan(&s.TokenHash, &s.UserID, &s.Username, &s.Role, &s.Site, &s.ActorType, &s.CreatedAt, &s.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("get session: %w", ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session: %w", err)
	}
	return s, nil
}

// DeleteSession removes one session.
func (db *DB) DeleteSession(ctx context.Context, hash string) error {
	if _, err := db.exec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, hash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteUserSessions removes every session of user id (password change,
// disable, delete).
func (db *DB) DeleteUserSessions(ctx context.Context, userID int64) error {
	if _, err := db.exec(ctx, `DELETE FROM sessions WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("delete sessions of user %d: %w", userID, err)
	}
	return nil
}

// DeleteExpiredSessions removes sessions that expired before now and
// returns how many.
func (db *DB) DeleteExpiredSessions(ctx context.Context, now int64) (int64, error) {
	res, err := db.exec(ctx, `DELETE FROM sessions WHERE expires_at < $1`, now)
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	return res.RowsAffected()
}
