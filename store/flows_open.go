package store

import (
	"encoding/json"
	"fmt"

	"netmon/store/flowagg"
)

// The open minutes (issue 28). Flows are summed in memory per exporter
// minute and written once, when the minute closes (flows_ingest.go): a
// flow read from the tables alone appears 40 to 60 seconds after it
// arrived. The flow reads therefore take the minutes not written yet (the
// ingest queue's summaries of its open minutes, flowagg.Aggregator.Peek,
// and those being written) and add their rows to the stored ones inside
// the query, as one JSON argument unnested by the database: the grouping,
// the order, the limit, the site scope, the filters and the Truncated
// remainder are the same SQL as for the stored rows, so the answer is
// what it will be once the minute is written. The caller (the queue's
// ReadOpenFlows) makes sure no minute is in both.

// openRow is one row of an open minute as the JSON argument carries it:
// the columns of flow_minutes.
type openRow struct {
	TS       int64  `json:"ts"`
	Exporter string `json:"exporter"`
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	SrcPort  int    `json:"src_port"`
	DstPort  int    `json:"dst_port"`
	Proto    int    `json:"proto"`
	Packets  int64  `json:"packets"`
	Octets   int64  `json:"octets"`
	Flows    int64  `json:"flows"`
	First    int64  `json:"first_seen"`
	Last     int64  `json:"last_seen"`
}

// openJSON encodes the rows of open as stored (an overflow minute has no
// exporter, an other row no addresses: flowWriter.rows).
func openJSON(open []flowagg.Minute) (string, error) {
	n := 0
	for i := range open {
		n += len(open[i].Rows)
	}
	rows := make([]openRow, 0, n)
	for i := range open {
		m := &open[i]
		exporter := ""
		if m.Exporter.IsValid() {
			exporter = m.Exporter.String()
		}
		for j := range m.Rows {
			r := &m.Rows[j]
			src, dst := "", ""
			if !r.Other {
				src, dst = r.Src.String(), r.Dst.String()
			}
			rows = append(rows, openRow{TS: m.TS, Exporter: exporter, Src: src, Dst: dst, SrcPort: int(r.SrcPort), DstPort: int(r.DstPort),
				Proto: int(r.Proto), Packets: int64(r.Packets), Octets: int64(r.Octets), Flows: int64(r.Flows), First: r.First, Last: r.Last})
		}
	}
	raw, err := json.Marshal(rows)
	return string(raw), err
}

// openRowsSQL selects the rows of the JSON argument $n with the columns
// of flow_minutes.
func openRowsSQL(d Dialect, n int) string {
	if d == Postgres {
		// Cast from text: the argument is a Go string either way.
		return fmt.Sprintf(`SELECT `+flowCols+` FROM json_to_recordset(CAST(CAST($%d AS TEXT) AS json)) AS o(ts BIGINT, exporter TEXT, src TEXT, dst TEXT,
			src_port INTEGER, dst_port INTEGER, proto INTEGER, packets BIGINT, octets BIGINT, flows BIGINT, first_seen BIGINT, last_seen BIGINT)`, n)
	}
	col := func(name string) string { return fmt.Sprintf(`json_extract(value, '$.%s') AS %s`, name, name) }
	return `SELECT ` + col("ts") + `, ` + col("exporter") + `, ` + col("src") + `, ` + col("dst") + `, ` + col("src_port") + `, ` +
		col("dst_port") + `, ` + col("proto") + `, ` + col("packets") + `, ` + col("octets") + `, ` + col("flows") + `, ` +
		col("first_seen") + `, ` + col("last_seen") + fmt.Sprintf(` FROM json_each($%d)`, n)
}

// withOpen returns what a flow read sums: table's rows matching where
// (a condition of " AND ..." terms over args), and with open minutes
// their rows matching the same condition (the site scope included), as a
// derived table whose own condition is then empty. Without open minutes
// it is table and where unchanged, the query as before.
func (db *DB) withOpen(table, where string, args []any, open []flowagg.Minute) (src, outer string, _ []any, err error) {
	if len(open) == 0 {
		return table, where, args, nil
	}
	raw, err := openJSON(open)
	if err != nil {
		return "", "", nil, fmt.Errorf("open flow minutes: %w", err)
	}
	args = append(args[:len(args):len(args)], raw)
	return `(SELECT ` + flowCols + ` FROM ` + table + ` WHERE 1 = 1` + where +
		` UNION ALL SELECT ` + flowCols + ` FROM (` + openRowsSQL(db.dialect, len(args)) + `) AS o WHERE 1 = 1` + where + `) AS w`, "", args, nil
}
