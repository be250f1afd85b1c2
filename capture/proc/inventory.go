package proc

import (
	"context"
	"net"
	"net/netip"
	"sort"
	"time"
)

// Connection is an entry of the connection inventory (GET
// /api/connections, spec 2.11, and the live tick): identical sockets are
// counted once with their count, the remote end with its country and ASN.
type Connection struct {
	Conn
	Count   int    `json:"count"`
	Country string `json:"country"`
	ASN     string `json:"asn"`
}

// Cacher lists the host's sockets from a cache no older than maxAge
// (*Lister).
type Cacher interface {
	Cached(ctx context.Context, maxAge time.Duration) ([]Conn, error)
}

// Lookup gives country and ASN of public addresses (*geo.Geo).
type Lookup interface {
	Lookup(addr netip.Addr) (country, asn string, ok bool)
}

// CacheAge is how old a socket listing may be: the API and the tick
// share one read of the kernel's tables.
const CacheAge = 2 * time.Second

// Inventory lists the host's sockets grouped by identical tuple, with the
// remote end's country and ASN (g may be nil); most numerous first.
func Inventory(ctx context.Context, l Cacher, g Lookup) ([]Connection, error) {
	conns, err := l.Cached(ctx, CacheAge)
	if err != nil {
		return nil, err
	}
	idx := map[Conn]int{}
	out := make([]Connection, 0, len(conns))
	for _, c := range conns {
		if i, ok := idx[c]; ok {
			out[i].Count++
			continue
		}
		item := Connection{Conn: c, Count: 1}
		if g != nil && c.RemoteAddr != "" {
			if host, _, err := net.SplitHostPort(c.RemoteAddr); err == nil {
				if a, err := netip.ParseAddr(host); err == nil {
					item.Country, item.ASN, _ = g.Lookup(a.Unmap())
				}
			}
		}
		idx[c] = len(out)
		out = append(out, item)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out, nil
}
