package api

import (
	"net/netip"
	"strings"

	"netmon/store"
)

// ipParam checks an address parameter: "" is no filter; an address is
// kept in its canonical text, as the store keeps it.
func ipParam(field, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	a, err := netip.ParseAddr(v)
	if err != nil {
		return "", invalidField(field, "query parameter %q: must be an IP address", field)
	}
	return a.Unmap().String(), nil
}

// flowFilter checks and builds the filter of a flow list.
func flowFilter(exporter, addr string, port, proto int) (store.FlowFilter, error) {
	var f store.FlowFilter
	var err error
	if f.Exporter, err = ipParam("exporter", exporter); err != nil {
		return f, err
	}
	if f.Addr, err = ipParam("addr", addr); err != nil {
		return f, err
	}
	f.Port, f.Proto = port, proto
	return f, nil
}

// domainParam checks a domain filter: a host name of at most 253 bytes of
// letters, digits, '-', '_' and '.', optionally after "*.".
func domainParam(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	name := strings.TrimPrefix(v, "*.")
	ok := len(name) > 0 && len(name) <= 253
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			ok = false
			break
		}
	}
	if !ok {
		return "", invalidField("domain", "query parameter \"domain\": must be a host name, optionally after *.")
	}
	return strings.TrimSuffix(v, "."), nil
}
