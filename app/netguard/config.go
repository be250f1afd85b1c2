package netguard

import (
	"fmt"
	"net/netip"
	"strings"
)

// Config is the operator's say over outbound connections.
type Config struct {
	// Allow lists the ranges an operator opens on purpose (-outbound-allow
	// CIDR,...), for example an SMTP relay on the office LAN or a SIEM on
	// loopback. It opens any refused class except the cloud metadata
	// addresses, which stay refused whatever is listed.
	Allow []netip.Prefix
}

// DefaultConfig allows nothing beyond globally routed unicast addresses.
func DefaultConfig() Config { return Config{} }

// ParseAllow reads a comma-separated CIDR list; a bare address is its
// own /32 or /128.
func ParseAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("outbound allow %q: %w", f, err)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("outbound allow %q: %w", f, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
