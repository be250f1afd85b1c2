package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrConflict is returned (wrapped) when a write would break a uniqueness
// rule, such as a second user with the same name.
var ErrConflict = errors.New("conflict")

// ErrLastAdmin is returned when a change would leave no enabled admin.
var ErrLastAdmin = errors.New("the last enabled admin cannot be removed, disabled or demoted")

// User is an RBAC user (spec section 2.10). PasswordHash is a bcrypt hash,
// empty for users who sign in only through SSO.
type User struct {
	ID           int64
	Username     string
	PasswordHash string
	Role         string
	Site         string
	Enabled      bool
	OIDCIssuer   string
	OIDCSubject  string
	CreatedAt    int64
	UpdatedAt    int64
}

// UserUpdate holds the fields of a user to change; nil leaves a field as is.
type UserUpdate struct {
	Role         *string
	Site         *string
	Enabled      *bool
	PasswordHash *string
}

const userColumns = `id, username, password_hash, role, site, enabled, oidc_issuer, oidc_subject, created_at, updated_at`

type rowScanner interface{ Scan(dest ...any) error }

func scanUser(r rowScanner) (User, error) {
	var u User
	err := r.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Role, &u.Site, &u.Enabled, &u.OIDCIssuer, &u.OIDCSubject, &u.CreatedAt, &u.UpdatedAt)
	return u, err
}

// isUniqueViolation recognises a unique-constraint failure on both engines.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "UNIQUE constraint failed") || strings.Contains(s, "SQLSTATE 23505")
}

// CreateUser inserts u and returns its id. A taken username (or OIDC
// identity) is ErrConflict.
func (t *Tx) CreateUser(ctx context.Context, u User) (int64, error) {
	now := time.Now().Unix()
	const q = `INSERT INTO users (username, password_hash, role, site, enabled, oidc_issuer, oidc_subject, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`
	var id int64
	err := t.tx.QueryRowContext(ctx, q, u.Username, u.PasswordHash, u.Role, u.Site, u.Enabled, u.OIDCIssuer, u.OIDCSubject, now).Scan(&id)
	if isUniqueViolation(err) {
		return 0, fmt.Errorf("create user %q: %w", u.Username, ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("create user %q: %w", u.Username, err)
	}
	return id, nil
}

// GetUser returns the user with id (ErrNotFound when none).
func (db *DB) GetUser(ctx context.Context, id int64) (User, error) {
	return getUserQ(ctx, db.reader, `WHERE id = $1`, id)
}

// GetUserByName returns the user called username (ErrNotFound when none).
func (db *DB) GetUserByName(ctx context.Context, username string) (User, error) {
	return getUserQ(ctx, db.reader, `WHERE username = $1`, username)
}

// GetUserByOIDC returns the user linked to (issuer, subject).
func (db *DB) GetUserByOIDC(ctx context.Context, issuer, subject string) (User, error) {
	return getUserQ(ctx, db.reader, `WHERE oidc_issuer = $1 AND oidc_subject = $2 AND oidc_subject <> ''`, issuer, subject)
}

// GetUser reads a user inside the transaction.
func (t *Tx) GetUser(ctx context.Context, id int64) (User, error) {
	return getUserQ(ctx, t.tx, `WHERE id = $1`, id)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getUserQ(ctx context.Context, q querier, where string, args ...any) (User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("get user: %w", ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("get user: %w", err)
	}
	return u, nil
}

// ListUsers returns the users ordered by name; site != "" keeps only that
// site's users.
func (db *DB) ListUsers(ctx context.Context, site string) ([]User, error) {
	q := `SELECT ` + userColumns + ` FROM users`
	var args []any
	if site != "" {
		q += ` WHERE site = $1`
		args = append(args, site)
	}
	rows, err := db.reader.QueryContext(ctx, q+` ORDER BY username`, args...)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	users := []User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		users = append(users, u)
	}
	return users, rows.Err()
}

// CountUsers returns the number of users, enabled or not.
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := db.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// EnabledAdminExists reports whether an enabled user with role admin exists:
// from then on the legacy password is refused (spec section 5 item 6).
func (db *DB) EnabledAdminExists(ctx context.Context) (bool, error) {
	var n int
	err := db.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE role = 'admin' AND enabled = TRUE`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("count admins: %w", err)
	}
	return n > 0, nil
}

// lockUsers makes concurrent admin-protecting changes take turns. SQLite's
// single writer already serialises; PostgreSQL needs the table lock so two
// transactions cannot each see "another admin remains" and both remove one.
func (t *Tx) lockUsers(ctx context.Context) error {
	if t.dialect != Postgres {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`)
	return err
}

// otherEnabledAdmins counts enabled admins other than id.
func (t *Tx) otherEnabledAdmins(ctx context.Context, id int64) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE role = 'admin' AND enabled = TRUE AND id <> $1`, id).Scan(&n)
	return n, err
}

// UpdateUser applies up to user id and returns the user before and after.
// Removing the last enabled admin (disabling or demoting it) is ErrLastAdmin.
func (t *Tx) UpdateUser(ctx context.Context, id int64, up UserUpdate) (before, after User, err error) {
	if err := t.lockUsers(ctx); err != nil {
		return User{}, User{}, fmt.Errorf("update user %d: %w", id, err)
	}
	before, err = t.GetUser(ctx, id)
	if err != nil {
		return User{}, User{}, err
	}
	after = before
	if up.Role != nil {
		after.Role = *up.Role
	}
	if up.Site != nil {
		after.Site = *up.Site
	}
	if up.Enabled != nil {
		after.Enabled = *up.Enabled
	}
	if up.PasswordHash != nil {
		after.PasswordHash = *up.PasswordHash
	}
	wasAdmin := before.Role == "admin" && before.Enabled
	staysAdmin := after.Role == "admin" && after.Enabled
	if wasAdmin && !staysAdmin {
		n, err := t.otherEnabledAdmins(ctx, id)
		if err != nil {
			return User{}, User{}, fmt.Errorf("update user %d: %w", id, err)
		}
		if n == 0 {
			return User{}, User{}, ErrLastAdmin
		}
	}
	after.UpdatedAt = time.Now().Unix()
	_, err = t.tx.ExecContext(ctx, `UPDATE users SET role = $1, site = $2, enabled = $3, password_hash = $4, updated_at = $5 WHERE id = $6`,
		after.Role, after.Site, after.Enabled, after.PasswordHash, after.UpdatedAt, id)
	if err != nil {
		return User{}, User{}, fmt.Errorf("update user %d: %w", id, err)
	}
	return before, after, nil
}

// DeleteUser removes user id and its sessions and returns it. Deleting
// the last enabled admin is ErrLastAdmin.
func (t *Tx) DeleteUser(ctx context.Context, id int64) (User, error) {
	if err := t.lockUsers(ctx); err != nil {
		return User{}, fmt.Errorf("delete user %d: %w", id, err)
	}
	u, err := t.GetUser(ctx, id)
	if err != nil {
		return User{}, err
	}
	if u.Role == "admin" && u.Enabled {
		n, err := t.otherEnabledAdmins(ctx, id)
		if err != nil {
			return User{}, fmt.Errorf("delete user %d: %w", id, err)
		}
		if n == 0 {
			return User{}, ErrLastAdmin
		}
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, id); err != nil {
		return User{}, fmt.Errorf("delete user %d sessions: %w", id, err)
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM users WHERE id = $1`, id); err != nil {
		return User{}, fmt.Errorf("delete user %d: %w", id, err)
	}
	return u, nil
}
