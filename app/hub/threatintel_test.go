package hub

import (
	"os"
	"path/filepath"
	"testing"

	"netmon/app/config"
)

// TestThreatIntelAndEnrich: GET /api/v1/threatintel answers each
// reputation with the list and line that decided it, GET /api/v1/enrich
// joins GeoIP, the public suffix list and the category file; bad queries
// are 400 naming the field.
func TestThreatIntelAndEnrich(t *testing.T) {
	dir := t.TempDir()
	ioc := filepath.Join(dir, "ioc.txt")
	cats := filepath.Join(dir, "cats.txt")
	if err := os.WriteFile(ioc, []byte("# list\n0.0.0.0 evil.test\n||phish.example.co.uk^\n198.51.100.66\njunk line here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cats, []byte("example.com trusted\nvideo.example.net streaming\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	geoDir := t.TempDir()
	for _, f := range []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "geoip", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(geoDir, f), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) {
		c.Threat.IOCFile, c.Threat.CategoryFile, c.Geo.Dir = ioc, cats, geoDir
	})
	c := h.client(t)
	list := `"list":{"path":"` + ioc + `","lines":5,"domains":2,"ips":1,"comments":1,"junk":1,"public_suffixes":0}`
	for _, tc := range []struct {
		desc, path string
		code       int
		body       string
	}{
		{"a subdomain of a listed name", "/api/v1/threatintel?domain=A.B.Evil.Test.", 200,
			`{"domain":"a.b.evil.test","reputation":"malicious","decided_by":{"source":"ioc_list","subject":"a.b.evil.test","entry":"evil.test","list":"` + ioc + `","line":2},` + list + `}`},
		{"an ad-block entry under a public suffix", "/api/v1/threatintel?domain=login.phish.example.co.uk", 200,
			`{"domain":"login.phish.example.co.uk","reputation":"malicious","decided_by":{"source":"ioc_list","subject":"login.phish.example.co.uk","entry":"phish.example.co.uk","list":"` + ioc + `","line":3},` + list + `}`},
		{"a listed address", "/api/v1/threatintel?ip=198.51.100.66", 200,
			`{"ip":"198.51.100.66","reputation":"malicious","decided_by":{"source":"ioc_list","subject":"198.51.100.66","entry":"198.51.100.66","list":"` + ioc + `","line":4},` + list + `}`},
		{"a private address", "/api/v1/threatintel?ip=10.1.2.3", 200,
			`{"ip":"10.1.2.3","reputation":"trusted","decided_by":{"source":"builtin","subject":"10.1.2.3","entry":"non-global address","line":0},` + list + `}`},
		{"a domain the operator trusts", "/api/v1/threatintel?domain=www.example.com", 200,
			`{"domain":"www.example.com","reputation":"trusted","decided_by":{"source":"category_list","subject":"www.example.com","entry":"example.com","list":"` + cats + `","line":1},` + list + `}`},
		{"the worse of the two wins", "/api/v1/threatintel?ip=10.1.2.3&domain=evil.test", 200,
			`{"ip":"10.1.2.3","domain":"evil.test","reputation":"malicious","decided_by":{"source":"ioc_list","subject":"evil.test","entry":"evil.test","list":"` + ioc + `","line":2},` + list + `}`},
		{"unknown", "/api/v1/threatintel?ip=8.8.8.8&domain=clean.example.org", 200,
			`{"ip":"8.8.8.8","domain":"clean.example.org","reputation":"unknown",` + list + `}`},
		{"no parameter", "/api/v1/threatintel", 400, ""},
		{"bad address", "/api/v1/threatintel?ip=1.2.3", 400, ""},
		{"public address and IDN", "/api/v1/enrich?ip=8.8.8.8&domain=WWW.B%C3%BCcher.video.example.net.", 200,
			`{"ip":"8.8.8.8","country":"US","asn":"AS15169","org":"Google LLC","private":false,"geo_source":"mmdb","domain":"WWW.Bücher.video.example.net.","normalised":"www.xn--bcher-kva.video.example.net","registrable":"example.net","public_suffix":"net","icann":true,"category":"streaming"}`},
		{"private address, multi-label suffix", "/api/v1/enrich?ip=10.0.0.1&domain=a.b.example.co.uk", 200,
			`{"ip":"10.0.0.1","private":true,"geo_source":"mmdb","domain":"a.b.example.co.uk","normalised":"a.b.example.co.uk","registrable":"example.co.uk","public_suffix":"co.uk","icann":true}`},
		{"a public suffix has no registrable domain", "/api/v1/enrich?domain=co.uk", 200,
			`{"private":false,"domain":"co.uk","normalised":"co.uk","public_suffix":"co.uk","icann":true}`},
		{"bad domain", "/api/v1/enrich?domain=a..b", 400, ""},
	} {
		r := c.call("GET", tc.path, nil)
		if r.code != tc.code || (tc.body != "" && r.body != tc.body) {
			t.Errorf("%s: GET %s = %d %s\nwant %d %s", tc.desc, tc.path, r.code, r.body, tc.code, tc.body)
		}
	}
}
