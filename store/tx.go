package store

import "database/sql"

// Tx is a write transaction. Entity methods that must commit together with
// something else — a privileged change and its audit record, above all —
// are defined on *Tx, so "the change is not made when its audit record
// cannot be written" (RELIABILITY case 17) is one transaction, not a hope.
type Tx struct {
	tx      *sql.Tx
	dialect Dialect
}

// Dialect is the dialect of the transaction's database.
func (t *Tx) Dialect() Dialect { return t.dialect }

// SQL returns the underlying transaction, for statements of packages that
// keep their own SQL (tests, migrations of later features).
func (t *Tx) SQL() *sql.Tx { return t.tx }
