package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// APIToken is an API token (spec section 2.10). Only the SHA-256 of the
// secret is stored (TokenHash, hex); the secret is shown once at creation.
type APIToken struct {
	ID        int64
	Name      string
	Role      string
	Site      string
	TokenHash string
	CreatedBy string
	CreatedAt int64
	LastUsed  int64
}

const tokenColumns = `id, name, role, site, token_hash, created_by, created_at, last_used`

func scanToken(r rowScanner) (APIToken, error) {
	var k APIToken
	err := r.Scan(&k.ID, &k.Name, &k.Role, &k.Site, &k.TokenHash, &k.CreatedBy, &k.CreatedAt, &k.LastUsed)
	return k, err
}

// CreateAPIToken stores k and returns its id.
func (t *Tx) CreateAPIToken(ctx context.Context, k APIToken) (int64, error) {
	const q = `INSERT INTO api_tokens (name, role, site, token_hash, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`
	var id int64
	err := t.tx.QueryRowContext(ctx, q, k.Name, k.Role, k.Site, k.TokenHash, k.CreatedBy, time.Now().Unix()).Scan(&id)
	if isUniqueViolation(err) {
		return 0, fmt.Errorf("create api token: %w", ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("create api token: %w", err)
	}
	return id, nil
}

// APITokenByHash returns the token whose secret hashes to hash.
func (db *DB) APITokenByHash(ctx context.Context, hash string) (APIToken, error) {
	k, err := scanToken(db.reader.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE token_hash = $1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return APIToken{}, fmt.Errorf("get api token: %w", ErrNotFound)
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("get api token: %w", err)
	}
	return k, nil
}

// ListAPITokens returns the tokens, oldest first; site != "" keeps only
// that site's tokens.
func (db *DB) ListAPITokens(ctx context.Context, site string) ([]APIToken, error) {
	q := `SELECT ` + tokenColumns + ` FROM api_tokens`
	var args []any
	if site != "" {
		q += ` WHERE site = $1`
		args = append(args, site)
	}
	rows, err := db.reader.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list api tokens: %w", err)
	}
	defer rows.Close()
	out := []APIToken{}
	for rows.Next() {
		k, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list api tokens: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// DeleteAPIToken removes token id and returns it; the bearer stops working
// at once because every request looks the hash up.
func (t *Tx) DeleteAPIToken(ctx context.Context, id int64) (APIToken, error) {
	k, err := scanToken(t.tx.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return APIToken{}, fmt.Errorf("delete api token %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("delete api token %d: %w", id, err)
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM api_tokens WHERE id = $1`, id); err != nil {
		return APIToken{}, fmt.Errorf("delete api token %d: %w", id, err)
	}
	return k, nil
}

// TouchAPIToken records a use of token id at ts.
func (db *DB) TouchAPIToken(ctx context.Context, id, ts int64) error {
	if _, err := db.exec(ctx, `UPDATE api_tokens SET last_used = $1 WHERE id = $2`, ts, id); err != nil {
		return fmt.Errorf("touch api token %d: %w", id, err)
	}
	return nil
}
