package store

import (
	"fmt"
	"strings"
)

// FlowFilter narrows the flow reads (GET /api/v1/flows,
// /flows/conversations, /flows/series, /events) to what an operator asks
// for; the zero value keeps everything. The values are checked by the
// API; here they are only ever SQL arguments.
type FlowFilter struct {
	// Exporter keeps one exporter's rows (its address as stored).
	Exporter string
	// Addr keeps the rows whose source or destination is this address.
	Addr string
	// Port keeps the rows whose source or destination port is this one
	// (0: any; port 0 cannot be asked for).
	Port int
	// Proto keeps one IP protocol number (0: any).
	Proto int
}

// Empty reports whether f keeps every row.
func (f FlowFilter) Empty() bool { return f == FlowFilter{} }

// Detail reports whether f names an address, port or protocol: the other
// rows (the counted remainder of detail the store did not keep, src "")
// carry none, so they match no such filter.
func (f FlowFilter) Detail() bool { return f.Addr != "" || f.Port != 0 || f.Proto != 0 }

// clause is f's SQL condition over the flow columns (exporter, src, dst,
// src_port, dst_port, proto) with its arguments numbered from n.
func (f FlowFilter) clause(n int) (string, []any) {
	var b strings.Builder
	var args []any
	arg := func(v any) int {
		args = append(args, v)
		return n + len(args) - 1
	}
	if f.Exporter != "" {
		fmt.Fprintf(&b, " AND exporter = $%d", arg(f.Exporter))
	}
	if f.Addr != "" {
		i := arg(f.Addr)
		fmt.Fprintf(&b, " AND (src = $%d OR dst = $%d)", i, i)
	}
	if f.Port != 0 {
		i := arg(f.Port)
		fmt.Fprintf(&b, " AND (src_port = $%d OR dst_port = $%d)", i, i)
	}
	if f.Proto != 0 {
		fmt.Fprintf(&b, " AND proto = $%d", arg(f.Proto))
	}
	return b.String(), args
}

// EventFilter narrows GET /api/v1/events beyond its type, agent and
// device: each field applies to the types that carry it, and a type that
// carries none of the fields asked for has no events in the answer.
type EventFilter struct {
	// Addr: netflow.flow src or dst, connection.seen remote_ip,
	// syslog.received source.
	Addr string
	// Port: netflow.flow src_port or dst_port, connection.seen remote_port.
	Port int
	// Proto: netflow.flow proto; connection.seen proto by name (tcp, udp).
	Proto int
	// Domain: dns.query domain, tls.sni_observed and http.host_observed
	// host; a leading "*." also keeps the subdomains.
	Domain string
}

// Applies reports whether events of type typ can match f.
func (f EventFilter) Applies(typ string) bool {
	switch typ {
	case "netflow.flow":
		return f.Domain == ""
	case "syslog.received":
		return f.Domain == "" && f.Port == 0 && f.Proto == 0
	case "connection.seen":
		return f.Domain == "" && (f.Proto == 0 || protoText(f.Proto) != "")
	case "dns.query", "tls.sni_observed", "http.host_observed":
		return f.Addr == "" && f.Port == 0 && f.Proto == 0
	}
	return false
}

// protoText is the agent tables' name of an IP protocol number.
func protoText(p int) string {
	switch p {
	case 6:
		return "tcp"
	case 17:
		return "udp"
	}
	return ""
}

// domainClause is the condition of a domain filter over column col.
func domainClause(col, domain string, n int) (string, []any) {
	if rest, ok := strings.CutPrefix(domain, "*."); ok {
		return fmt.Sprintf(` AND (%s = $%d OR %s LIKE $%d ESCAPE '\')`, col, n, col, n+1), []any{rest, "%." + likeEscape(rest)}
	}
	return fmt.Sprintf(" AND %s = $%d", col, n), []any{domain}
}

// likeEscape keeps LIKE's wildcards literal ("_" is legal in names, as in
// _dmarc): both engines take the ESCAPE character the clause names.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
