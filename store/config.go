package store

// Config configures the database the hub stores its state in.
type Config struct {
	// DSN selects the database. A URL starting with postgres:// or
	// postgresql:// opens PostgreSQL through pgx (any query parameter pgx
	// does not know, such as search_path, is sent as a runtime parameter).
	// Anything else is the path of a SQLite database file, created when
	// missing; its directory must already exist. The path may not carry a
	// query string: the connection parameters are chosen by this package.
	DSN string
	// MaxConns is the size of the read pool (the SQLite read pool, or the
	// single PostgreSQL pool used for both reads and writes). SQLite
	// writes always go through one dedicated connection. Filled by the
	// caller from NETMON_DB_MAX_CONNS; must be positive.
	MaxConns int
}

// DefaultConfig returns the default configuration: a SQLite file named
// netmon.db in the working directory and 32 pooled connections.
func DefaultConfig() Config {
	return Config{DSN: "netmon.db", MaxConns: 32}
}

// Dialect names the SQL database engine behind a DB.
type Dialect string

const (
	// SQLite is the embedded database (modernc.org/sqlite, pure Go).
	SQLite Dialect = "sqlite"
	// Postgres is PostgreSQL, reached through pgx.
	Postgres Dialect = "postgres"
)
