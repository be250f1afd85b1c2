package api

import (
	"net/netip"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/capture/proc"
	"netmon/collectors/geo"
)

// Connection is an entry of GET /api/connections (spec 2.11): an entry of
// capture/proc's inventory, under this package's name in the document.
type Connection struct {
	proc.Connection
}

// ConnLister lists the host's sockets (*proc.Lister).
type ConnLister = proc.Cacher

// GeoLookup gives country and ASN of public addresses (*geo.Geo).
type GeoLookup interface {
	Lookup(addr netip.Addr) (country, asn string, ok bool)
	Source() string
}

// GeoStatus is GET /api/v1/geo/status: whether the hub can place
// addresses, so that a console says "no GeoIP database" from the hub's
// word rather than from empty countries.
type GeoStatus struct {
	// Source is where answers come from: mmdb (a database is loaded),
	// online (no database; the online lookup is on) or none.
	Source string `json:"source" jsonschema:"enum=mmdb,enum=online,enum=none"`
	// Countries and ASN tell whether the loaded databases answer them.
	Countries bool `json:"countries"`
	ASN       bool `json:"asn"`
	// Databases are the loaded files.
	Databases []geo.DatabaseInfo `json:"databases"`
}

// geoDatabases is the part of *geo.Geo that lists its databases.
type geoDatabases interface{ Databases() []geo.DatabaseInfo }

func (s *Server) geoStatus(*gin.Context, *router.NoInput) (GeoStatus, error) {
	out := GeoStatus{Source: geo.SourceNone, Databases: []geo.DatabaseInfo{}}
	if s.deps.Geo == nil {
		return out, nil
	}
	out.Source = s.deps.Geo.Source()
	if d, ok := s.deps.Geo.(geoDatabases); ok {
		out.Databases = append(out.Databases, d.Databases()...)
	}
	for _, d := range out.Databases {
		out.Countries = out.Countries || strings.Contains(d.Kind, "country")
		out.ASN = out.ASN || strings.Contains(d.Kind, "asn")
	}
	if out.Source == geo.SourceOnline {
		out.Countries, out.ASN = true, true
	}
	return out, nil
}

func (s *Server) connections(c *gin.Context, _ *router.NoInput) ([]Connection, error) {
	inv, err := proc.Inventory(c, s.deps.Conns, s.deps.Geo)
	if err != nil {
		return nil, err
	}
	out := make([]Connection, len(inv))
	for i, x := range inv {
		out[i] = Connection{x}
	}
	return out, nil
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
