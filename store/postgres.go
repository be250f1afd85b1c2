package store

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

const (
	// pgStartTimeout bounds the first ping: a hub whose database is
	// unreachable at start fails fast with a clear error.
	pgStartTimeout = 10 * time.Second
	// pgConnectTimeout bounds each later dial. database/sql sometimes
	// dials in the background without a deadline; a blackholed server
	// must not pin a pool slot for minutes of TCP retries.
	pgConnectTimeout = 10 * time.Second
)

// openPostgres opens the one pool used for reads and writes.
//
// Surviving a restart of the server: every connection handed out by
// database/sql first goes through pgx stdlib's ResetSession, which
// discards a connection pgx already knows is closed and pings one that sat
// idle for more than a second, discarding it on failure (driver.ErrBadConn
// makes database/sql retry on a fresh connection). A query that hits a
// connection killed less than a second earlier fails once; pgx closes that
// connection on the network error and it is dropped on return to the pool.
// No dead connection can therefore fail repeatedly; while the server is
// down new dials fail and each caller gets an error within its context;
// once it is back, new dials succeed. ConnMaxLifetime and ConnMaxIdleTime
// also age connections out so a failover behind a DNS name is followed.
func openPostgres(ctx context.Context, cfg Config) (*DB, error) {
	redacted := redactDSN(cfg.DSN)
	connConfig, err := pgx.ParseConfig(cfg.DSN)
	if err != nil {
		// pgx's parse errors can quote the DSN: do not wrap them.
		return nil, fmt.Errorf("open postgres database %q: invalid DSN", redacted)
	}
	if connConfig.ConnectTimeout == 0 {
		connConfig.ConnectTimeout = pgConnectTimeout
	}

	pool := stdlib.OpenDB(*connConfig)
	pool.SetMaxOpenConns(cfg.MaxConns)
	pool.SetMaxIdleConns(cfg.MaxConns)
	pool.SetConnMaxLifetime(30 * time.Minute)
	pool.SetConnMaxIdleTime(5 * time.Minute)

	pingCtx, cancel := context.WithTimeout(ctx, pgStartTimeout)
	defer cancel()
	if err := pool.PingContext(pingCtx); err != nil {
		_ = pool.Close()
		return nil, fmt.Errorf("open postgres database %q: server unreachable: %w", redacted, err)
	}
	return &DB{dialect: Postgres, redacted: redacted, reader: pool, writer: pool}, nil
}

// redactPlaceholder replaces a password in a redacted DSN.
const redactPlaceholder = "xxxxx"

// redactDSN hides the password of a URL DSN, in its user info and in a
// password query parameter. A SQLite path is returned unchanged; a URL
// that does not parse is reduced to its scheme.
func redactDSN(dsn string) string {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return scheme + "://" + redactPlaceholder
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redactPlaceholder)
		}
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", redactPlaceholder)
		u.RawQuery = q.Encode()
	}
	return u.String()
}
