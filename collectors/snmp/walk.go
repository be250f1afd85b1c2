package snmp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gosnmp/gosnmp"
)

// Numeric OIDs (Debian ships no MIB files; nothing here resolves names).
const (
	oidSysDescr    = ".1.3.6.1.2.1.1.1.0"
	oidSysObjectID = ".1.3.6.1.2.1.1.2.0"
	oidSysUpTime   = ".1.3.6.1.2.1.1.3.0"
	oidSysName     = ".1.3.6.1.2.1.1.5.0"

	oidIfEntry  = ".1.3.6.1.2.1.2.2.1."    // IF-MIB ifTable columns
	oidIfXEntry = ".1.3.6.1.2.1.31.1.1.1." // IF-MIB ifXTable columns

	oidHrProcessorLoad = ".1.3.6.1.2.1.25.3.3.1.2"
	oidHrStorageEntry  = ".1.3.6.1.2.1.25.2.3.1."
	oidHrStorageRAM    = ".1.3.6.1.2.1.25.2.1.2"
	oidHrStorageDisk   = ".1.3.6.1.2.1.25.2.1.4"

	oidUcdSsCPUIdle    = ".1.3.6.1.4.1.2021.11.11.0"
	oidUcdMemTotal     = ".1.3.6.1.4.1.2021.4.5.0"
	oidUcdMemAvail     = ".1.3.6.1.4.1.2021.4.6.0"
	oidUcdMemBuffer    = ".1.3.6.1.4.1.2021.4.14.0"
	oidUcdMemCached    = ".1.3.6.1.4.1.2021.4.15.0"
	oidLldpLocPortID   = ".1.0.8802.1.1.2.1.3.7.1.3"
	oidLldpLocPortSub  = ".1.0.8802.1.1.2.1.3.7.1.2"
	oidLldpLocPortDesc = ".1.0.8802.1.1.2.1.3.7.1.4"
	oidLldpRemEntry    = ".1.0.8802.1.1.2.1.4.1.1."
	oidLldpRemManAddr  = ".1.0.8802.1.1.2.1.4.2.1.3"
	oidCdpCacheEntry   = ".1.3.6.1.4.1.9.9.23.1.2.1.1."
	oidIPNetToMedia    = ".1.3.6.1.2.1.4.22.1.2"
)

// usm report OIDs (RFC 3414): why a v3 request was refused.
var usmReports = map[string]string{
	".1.3.6.1.6.3.15.1.1.1.0": "unsupported security level (the user has no such auth/priv setting)",
	".1.3.6.1.6.3.15.1.1.2.0": "not in time window (the agent's engine clock moved)",
	".1.3.6.1.6.3.15.1.1.3.0": "unknown user",
	".1.3.6.1.6.3.15.1.1.4.0": "unknown engine id",
	".1.3.6.1.6.3.15.1.1.5.0": "authentication failure (wrong auth password or protocol)",
	".1.3.6.1.6.3.15.1.1.6.0": "decryption error (wrong privacy password or protocol)",
}

// column is a table column to walk: its OID (no trailing dot) and the
// rows found, by index suffix (the part after the column OID, with its
// leading dot removed).
type column struct {
	oid    string
	prefix string // oid + "."
	rows   map[string]gosnmp.SnmpPDU
	next   string // the last OID returned: where the walk continues
	done   bool
}

// errReport is a v3 report PDU turned into an error.
type errReport struct{ msg string }

func (e errReport) Error() string { return e.msg }

// checkReport turns a report PDU (a v3 refusal) into an error.
func checkReport(p *gosnmp.SnmpPacket) error {
	if p == nil || p.PDUType != gosnmp.Report {
		return nil
	}
	for _, v := range p.Variables {
		if msg, ok := usmReports[v.Name]; ok {
			return errReport{msg}
		}
	}
	return errReport{"refused by the agent (report PDU)"}
}

// walkColumns walks several columns of a table in parallel: each GETBULK
// (GETNEXT for SNMPv1) carries the next OID of every column not yet
// finished, with as many repetitions as fit in budget varbinds. A column
// ends at the first OID outside it, endOfMibView, or after maxRows rows.
func walkColumns(g *gosnmp.GoSNMP, budget, maxRows int, oids ...string) ([]*column, int, error) {
	return walkColumnsHint(g, budget, maxRows, 0, oids...)
}

// walkColumnsHint is walkColumns with the rows a column is expected to
// have (0: unknown), so that its map is sized once. The request slices
// are built once and reused by every request of the walk.
func walkColumnsHint(g *gosnmp.GoSNMP, budget, maxRows, hint int, oids ...string) ([]*column, int, error) {
	cols := make([]*column, len(oids))
	for i, o := range oids {
		o = strings.TrimSuffix(o, ".")
		cols[i] = &column{oid: o, prefix: o + ".", rows: make(map[string]gosnmp.SnmpPDU, hint), next: o}
	}
	requests := 0
	active := make([]*column, 0, len(cols))
	req := make([]string, 0, len(cols))
	progressed := make([]bool, len(cols))
	for {
		active, req = active[:0], req[:0]
		for _, c := range cols {
			if !c.done {
				active = append(active, c)
				req = append(req, c.next)
			}
		}
		if len(active) == 0 {
			return cols, requests, nil
		}
		var p *gosnmp.SnmpPacket
		var err error
		reps := max(1, budget/len(active))
		if g.Version == gosnmp.Version1 {
			reps = 1
			p, err = g.GetNext(req)
		} else {
			p, err = g.GetBulk(req, 0, uint32(reps))
		}
		requests++
		if err != nil {
			return cols, requests, err
		}
		if err := checkReport(p); err != nil {
			return cols, requests, err
		}
		if g.Version == gosnmp.Version1 && p.Error == gosnmp.NoSuchName {
			return cols, requests, nil // v1 end of the MIB
		}
		if p.Error != gosnmp.NoError {
			return cols, requests, fmt.Errorf("agent error %s", p.Error)
		}
		clear(progressed)
		for i, v := range p.Variables {
			c := active[i%len(active)]
			if c.done {
				continue
			}
			if v.Type == gosnmp.EndOfMibView || v.Type == gosnmp.NoSuchObject || v.Type == gosnmp.NoSuchInstance ||
				!strings.HasPrefix(v.Name, c.prefix) || len(c.rows) >= maxRows {
				c.done = true
				continue
			}
			if oidLessEq(v.Name, c.next) {
				// An agent going backwards would loop forever.
				c.done = true
				continue
			}
			c.rows[v.Name[len(c.prefix):]] = v
			c.next = v.Name
			progressed[i%len(active)] = true
		}
		for i, c := range active {
			if !progressed[i] {
				c.done = true // no row in this answer: finished
			}
		}
	}
}

// oidLessEq reports whether OID a sorts at or before b (numerically),
// without allocating: it runs once per value received.
func oidLessEq(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i] == '.' {
			i++
		}
		for j < len(b) && b[j] == '.' {
			j++
		}
		if i >= len(a) || j >= len(b) {
			return i >= len(a) // a ran out first (or both): a <= b
		}
		si, sj := i, j
		for i < len(a) && a[i] != '.' {
			i++
		}
		for j < len(b) && b[j] != '.' {
			j++
		}
		x, y := a[si:i], b[sj:j]
		if len(x) != len(y) {
			return len(x) < len(y)
		}
		if x != y {
			return x < y
		}
	}
}

// describe turns a gosnmp error into the words of last_error.
func describe(err error, target string, cfg Config) string {
	var rep errReport
	switch {
	case err == nil:
		return ""
	case errors.As(err, &rep):
		return rep.msg
	case strings.Contains(err.Error(), "connection refused"):
		return fmt.Sprintf("unreachable: nothing answers SNMP at %s (ICMP port unreachable)", target)
	case strings.Contains(err.Error(), "unknown username"):
		return "unknown user"
	case strings.Contains(err.Error(), "not authentic"):
		return "authentication failure (wrong auth password or protocol)"
	case strings.Contains(err.Error(), "timeout"):
		return fmt.Sprintf("timeout: no answer from %s within %s (%d tries); for v2c check the community", target, cfg.Timeout, cfg.Retries+1)
	case strings.Contains(err.Error(), "wrong digest") || strings.Contains(err.Error(), "authentication"):
		return "authentication failure (wrong auth password or protocol)"
	case strings.Contains(err.Error(), "decrypt"):
		return "decryption error (wrong privacy password or protocol)"
	}
	return err.Error()
}
