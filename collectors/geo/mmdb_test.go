package geo

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// result is what Info answered, for comparing with go-cmp.
type result struct {
	Info Info
	OK   bool
}

func TestLookupMMDB(t *testing.T) {
	google := Info{Country: "US", ASN: "AS15169", Org: "Google LLC"}
	tests := []struct {
		desc  string
		files []string // fixtures copied into Dir, under their own names
		addr  string
		want  result
	}{
		{"MaxMind country and ASN, IPv4", []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"}, "8.8.8.8", result{google, true}},
		{"MaxMind country and ASN, IPv6", []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"}, "2001:4860:4860::8888", result{google, true}},
		{"IPv4-mapped IPv6 outside the networks", []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"}, "::ffff:8.8.4.4", result{}},
		{"IPv4-mapped IPv6 inside a network", []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"}, "::ffff:8.8.8.8", result{google, true}},
		{"org with an ampersand", []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"}, "81.2.69.142", result{Info{"GB", "AS20712", "Andrews & Arnold Ltd"}, true}},
		{"registered country when country is absent", []string{"maxmind-country.mmdb"}, "1.0.0.1", result{Info{Country: "AU"}, true}},
		{"country only, no ASN database", []string{"maxmind-country.mmdb"}, "2001:218::1", result{Info{Country: "JP"}, true}},
		{"ASN only, no country database", []string{"maxmind-asn.mmdb"}, "5.9.1.1", result{Info{ASN: "AS24940", Org: "Hetzner Online GmbH"}, true}},
		{"public IPv4 outside every network", []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"}, "9.9.9.9", result{}},
		{"public IPv6 outside every network", []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"}, "2606:4700::1111", result{}},
		{"ip-location-db country, IPv4", []string{"iplocationdb-country.mmdb"}, "5.9.200.1", result{Info{Country: "DE"}, true}},
		{"ip-location-db country, IPv6", []string{"iplocationdb-country.mmdb"}, "2a01:4f8:1:2::3", result{Info{Country: "DE"}, true}},
		{"ip-location-db country + MaxMind ASN", []string{"iplocationdb-country.mmdb", "maxmind-asn.mmdb"}, "5.9.0.1", result{Info{"DE", "AS24940", "Hetzner Online GmbH"}, true}},
		{"IPv4-only database, IPv4 address", []string{"iplocationdb-country-ipv4.mmdb"}, "5.9.0.1", result{Info{Country: "DE"}, true}},
		{"IPv4-only database, IPv6 address", []string{"iplocationdb-country-ipv4.mmdb"}, "2a01:4f8::1", result{}},
		{"first file by name wins", []string{"iplocationdb-country.mmdb", "maxmind-country.mmdb"}, "8.8.8.8", result{Info{Country: "CA"}, true}},
		{"private IPv4 in a database network", []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"}, "10.1.2.3", result{}},
		{"ULA in a database network", []string{"maxmind-country.mmdb"}, "fd12:3456::1", result{}},
		{"loopback", []string{"maxmind-country.mmdb"}, "127.0.0.1", result{}},
		{"IPv6 loopback", []string{"maxmind-country.mmdb"}, "::1", result{}},
		{"link-local", []string{"maxmind-country.mmdb"}, "169.254.169.254", result{}},
		{"IPv6 link-local", []string{"maxmind-country.mmdb"}, "fe80::1", result{}},
		{"multicast", []string{"maxmind-country.mmdb"}, "224.0.0.251", result{}},
		{"unspecified", []string{"maxmind-country.mmdb"}, "0.0.0.0", result{}},
		{"CGNAT", []string{"maxmind-country.mmdb"}, "100.64.1.1", result{}},
		{"mapped private", []string{"maxmind-country.mmdb"}, "::ffff:10.0.0.1", result{}},
		{"invalid address", []string{"maxmind-country.mmdb"}, "", result{}},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				copyFixture(t, f, dir, f)
			}
			g, _ := startGeo(t, Config{Dir: dir})
			a := addrOrZero(tc.addr)
			info, ok := g.Info(a)
			if diff := cmp.Diff(result{info, ok}, tc.want); diff != "" {
				t.Errorf("Info(%s) (-got, +want):\n%s", tc.addr, diff)
			}
			country, asn, ok := g.Lookup(a)
			if diff := cmp.Diff(result{Info{Country: country, ASN: asn}, ok}, result{Info{Country: tc.want.Info.Country, ASN: tc.want.Info.ASN}, tc.want.OK}); diff != "" {
				t.Errorf("Lookup(%s) (-got, +want):\n%s", tc.addr, diff)
			}
			if got := g.Source(); got != SourceMMDB {
				t.Errorf("Source() = %q, want mmdb", got)
			}
		})
	}
}

func addrOrZero(s string) (a netip.Addr) {
	if s == "" {
		return a
	}
	return addr(s)
}

func TestSource(t *testing.T) {
	tests := []struct {
		desc   string
		dir    func(t *testing.T) string
		online bool
		want   string
	}{
		{"missing directory, offline", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, false, SourceNone},
		{"missing directory, online", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, true, SourceOnline},
		{"empty directory, offline", func(t *testing.T) string { return t.TempDir() }, false, SourceNone},
		{"only a corrupt file, online", func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "bad.mmdb"), []byte("not a database"), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, true, SourceOnline},
		{"a database and online", func(t *testing.T) string {
			dir := t.TempDir()
			copyFixture(t, "maxmind-country.mmdb", dir, "country.mmdb")
			return dir
		}, true, SourceMMDB},
		{"a file of another extension is ignored", func(t *testing.T) string {
			dir := t.TempDir()
			copyFixture(t, "maxmind-country.mmdb", dir, "country.mmdb.bak")
			return dir
		}, false, SourceNone},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			g, _ := startGeo(t, Config{Dir: tc.dir(t), Online: tc.online, OnlineURL: "http://127.0.0.1:1/batch"})
			if got := g.Source(); got != tc.want {
				t.Errorf("Source() = %q, want %q", got, tc.want)
			}
			if _, _, ok := g.Lookup(addr("8.8.8.8")); ok && tc.want != SourceMMDB {
				t.Errorf("Lookup answered without a database")
			}
		})
	}
}
