package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// EnrollToken is an agent enrollment token (spec 2.10). Only the SHA-256
// of the secret is stored.
type EnrollToken struct {
	ID        int64
	Name      string
	Site      string
	TokenHash string
	CreatedBy string
	CreatedAt int64
	// ExpiresAt is Unix seconds; 0 means never.
	ExpiresAt int64
	// MaxUses is how many enrollments the token allows; 0 is unlimited.
	MaxUses int
	Uses    int
	// AllowedCIDRs restricts the source address of a hello ("" = any):
	// comma-separated prefixes, validated by the fleet service.
	AllowedCIDRs string
	LastUsed     int64
	// RevokedAt is when the token was revoked; 0 while active.
	RevokedAt int64
}

const enrollColumns = `id, name, site, token_hash, created_by, created_at, expires_at, max_uses, uses, allowed_cidrs, last_used, revoked_at`

func scanEnrollToken(r rowScanner) (EnrollToken, error) {
	var k EnrollToken
	err := r.Scan(&k.ID, &k.Name, &k.Site, &k.TokenHash, &k.CreatedBy, &k.CreatedAt, &k.ExpiresAt, &k.MaxUses, &k.Uses, &k.AllowedCIDRs, &k.LastUsed, &k.RevokedAt)
	return k, err
}

// CreateEnrollToken stores k and returns its id.
func (t *Tx) CreateEnrollToken(ctx context.Context, k EnrollToken) (int64, error) {
	const q = `INSERT INTO enroll_tokens (name, site, token_hash, created_by, created_at, expires_at, max_uses, allowed_cidrs)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`
	var id int64
	err := t.tx.QueryRowContext(ctx, q, k.Name, k.Site, k.TokenHash, k.CreatedBy, k.CreatedAt, k.ExpiresAt, k.MaxUses, k.AllowedCIDRs).Scan(&id)
	if isUniqueViolation(err) {
		return 0, fmt.Errorf("create enroll token: %w", ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("create enroll token: %w", err)
	}
	return id, nil
}

// EnrollTokenByHash returns the token whose secret hashes to hash.
func (t *Tx) EnrollTokenByHash(ctx context.Context, hash string) (EnrollToken, error) {
	k, err := scanEnrollToken(t.tx.QueryRowContext(ctx, `SELECT `+enrollColumns+` FROM enroll_tokens WHERE token_hash = $1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return EnrollToken{}, fmt.Errorf("get enroll token: %w", ErrNotFound)
	}
	if err != nil {
		return EnrollToken{}, fmt.Errorf("get enroll token: %w", err)
	}
	return k, nil
}

// UseEnrollToken counts one enrollment with token id at ts. It returns
// false when the token has no use left, checked in the same statement so
// that two parallel hellos cannot both take a single-use token's last use.
func (t *Tx) UseEnrollToken(ctx context.Context, id, ts int64) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE enroll_tokens SET uses = uses + 1, last_used = $1
		WHERE id = $2 AND revoked_at = 0 AND (max_uses = 0 OR uses < max_uses)`, ts, id)
	if err != nil {
		return false, fmt.Errorf("use enroll token %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("use enroll token %d: %w", id, err)
	}
	return n == 1, nil
}

// ListEnrollTokens returns the tokens, oldest first; site != "" keeps only
// that site's tokens.
func (db *DB) ListEnrollTokens(ctx context.Context, site string) ([]EnrollToken, error) {
	q := `SELECT ` + enrollColumns + ` FROM enroll_tokens`
	var args []any
	if site != "" {
		q += ` WHERE site = $1`
		args = append(args, site)
	}
	rows, err := db.reader.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list enroll tokens: %w", err)
	}
	defer rows.Close()
	out := []EnrollToken{}
	for rows.Next() {
		k, err := scanEnrollToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list enroll tokens: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeEnrollToken marks token id revoked at ts and returns it as it was
// before. Revoking a revoked token keeps the first revocation time.
func (t *Tx) RevokeEnrollToken(ctx context.Context, id, ts int64) (EnrollToken, error) {
	k, err := scanEnrollToken(t.tx.QueryRowContext(ctx, `SELECT `+enrollColumns+` FROM enroll_tokens WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return EnrollToken{}, fmt.Errorf("revoke enroll token %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return EnrollToken{}, fmt.Errorf("revoke enroll token %d: %w", id, err)
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE enroll_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at = 0`, ts, id); err != nil {
		return EnrollToken{}, fmt.Errorf("revoke enroll token %d: %w", id, err)
	}
	return k, nil
}
