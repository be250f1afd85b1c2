package api

import (
	"context"
	"net"
	"net/netip"
	"sort"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/capture/proc"
	"netmon/collectors/geo"
)

// Connection is an entry of GET /api/connections (spec 2.11): identical
// sockets are counted once with their count.
type Connection struct {
	proc.Conn
	Count   int    `json:"count"`
	Country string `json:"country"`
	ASN     string `json:"asn"`
}

// ConnLister lists the host's sockets (*proc.Lister).
type ConnLister interface {
	Cached(ctx context.Context, maxAge time.Duration) ([]proc.Conn, error)
}

// GeoLookup gives country and ASN of public addresses (*geo.Geo).
type GeoLookup interface {
	Lookup(addr netip.Addr) (country, asn string, ok bool)
	Source() string
}

// connCacheAge is how old a socket listing may be: the API and the tick
// share one read of the kernel's tables.
const connCacheAge = 2 * time.Second

// Connections lists the host's sockets grouped by identical tuple, with
// the remote end's country and ASN; most numerous first.
func Connections(ctx context.Context, l ConnLister, g GeoLookup) ([]Connection, error) {
	conns, err := l.Cached(ctx, connCacheAge)
	if err != nil {
		return nil, err
	}
	idx := map[proc.Conn]int{}
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

func (s *Server) connections(c *gin.Context, _ *router.NoInput) ([]Connection, error) {
	return Connections(c, s.deps.Conns, s.deps.Geo)
}

// GeoItem is an entry of GET /api/v1/geo (spec 2.12).
type GeoItem struct {
	Country string  `json:"country"`
	Name    string  `json:"name"`
	Lat     float64 `json:"lat"`
	Lon     float64 `json:"lon"`
	Bytes   int64   `json:"bytes"`
	// Sessions is the number of distinct remote addresses.
	Sessions int64 `json:"sessions"`
}

type geoIn struct {
	Minutes int `query:"minutes" min:"1" max:"10080" default:"60" doc:"window ending now, in minutes (at most 7 days)"`
}

func (s *Server) geoMap(c *gin.Context, in *geoIn) ([]GeoItem, error) {
	out := []GeoItem{}
	if s.deps.Geo == nil || s.deps.Geo.Source() == "none" {
		return out, nil
	}
	rows, err := s.deps.GeoStore.TrafficByCountry(c, time.Now().Add(-time.Duration(in.Minutes)*time.Minute).Unix())
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		lat, lon, _ := geo.Centroid(r.Country)
		out = append(out, GeoItem{Country: r.Country, Name: geo.CountryName(r.Country), Lat: lat, Lon: lon, Bytes: r.Bytes, Sessions: r.Sessions})
	}
	return out, nil
}
