package geo

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/oschwald/maxminddb-golang/v2"
)

// dbKind says which answers a database gives.
type dbKind uint8

const (
	kindCountry dbKind = 1 << iota
	kindASN
)

func (k dbKind) String() string {
	switch k {
	case kindCountry:
		return "country"
	case kindASN:
		return "asn"
	}
	return "country+asn"
}

// record decodes every layout netmon reads, so one decoder serves them
// all: MaxMind Country/City (country.iso_code, registered_country as the
// fallback for anycast and satellite networks), ip-location-db
// (country_code) and the ASN layout of MaxMind and of mmdbconv
// (autonomous_system_number, autonomous_system_organization).
type record struct {
	Country struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"country"`
	RegisteredCountry struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"registered_country"`
	CountryCode string `maxminddb:"country_code"`
	ASN         uint32 `maxminddb:"autonomous_system_number"`
	ASOrg       string `maxminddb:"autonomous_system_organization"`
}

func (r *record) country() string {
	for _, c := range []string{r.Country.ISOCode, r.RegisteredCountry.ISOCode, r.CountryCode} {
		if validCountry(c) {
			return strings.ToUpper(c)
		}
	}
	return ""
}

func validCountry(c string) bool {
	return len(c) == 2 && isLetter(c[0]) && isLetter(c[1])
}

func isLetter(b byte) bool { return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' }

// database is one opened .mmdb file.
type database struct {
	name   string      // base name, the sort key
	stat   fs.FileInfo // of the file version that was read
	reader *maxminddb.Reader
	// unmap frees the bytes reader reads. Lookups hold Geo.mu's read
	// lock, and retired databases are closed after the swap under its
	// write lock, so no lookup runs on unmapped memory.
	unmap func() error
	kind  dbKind
	ipv4  bool // IPv4-only tree: IPv6 lookups would fail
}

// openDatabase loads a private copy of path (loadFile says why and how)
// and checks it: every record is decoded before the database may
// replace a good one. The survey's pages are then released, so an idle
// hub does not hold the whole database in memory.
func openDatabase(path string, stat fs.FileInfo) (*database, error) {
	data, unmap, err := loadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read geoip database %q: %w", path, err)
	}
	r, err := maxminddb.OpenBytes(data)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("open geoip database %q: %w", path, err)
	}
	kind, err := survey(r)
	if err != nil {
		_ = r.Close()
		_ = unmap()
		return nil, fmt.Errorf("check geoip database %q: %w", path, err)
	}
	release(data)
	return &database{
		name:   filepath.Base(path),
		stat:   stat,
		reader: r,
		unmap:  unmap,
		kind:   kind,
		ipv4:   r.Metadata.IPVersion == 4,
	}, nil
}

// survey decodes every network of r the way lookups will, so a corrupt
// file is refused before it replaces a good one, and learns from the
// records which answers the file gives (its kind). Reader.Verify is not
// used: it refuses the ip-location-db files for their empty metadata
// description. A walk costs about 150 ms for a country database.
func survey(r *maxminddb.Reader) (dbKind, error) {
	var kind dbKind
	for res := range r.Networks() {
		var rec record
		if err := res.Decode(&rec); err != nil {
			return 0, fmt.Errorf("network %s: %w", res.Prefix(), err)
		}
		if rec.country() != "" {
			kind |= kindCountry
		}
		if rec.ASN != 0 {
			kind |= kindASN
		}
	}
	if kind == 0 {
		return 0, fmt.Errorf("no record has a country or an AS number (database_type %q)", r.Metadata.DatabaseType)
	}
	return kind, nil
}

func (d *database) close() {
	_ = d.reader.Close()
	_ = d.unmap()
}

// lookupDatabases asks dbs in name order; for each of country and ASN
// the first database that knows it wins. Decoding errors are returned
// joined, after the answers the other databases gave.
func lookupDatabases(dbs []*database, addr netip.Addr) (Info, error) {
	var info Info
	var errs []error
	for _, d := range dbs {
		needCountry := info.Country == "" && d.kind&kindCountry != 0
		needASN := info.ASN == "" && d.kind&kindASN != 0
		if !needCountry && !needASN || d.ipv4 && addr.Is6() {
			continue
		}
		var rec record
		if err := d.reader.Lookup(addr).Decode(&rec); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.name, err))
			continue
		}
		if needCountry {
			info.Country = rec.country()
		}
		if needASN && rec.ASN != 0 {
			info.ASN = "AS" + strconv.FormatUint(uint64(rec.ASN), 10)
			info.Org = rec.ASOrg
		}
		if info.Country != "" && info.ASN != "" {
			break
		}
	}
	return info, errors.Join(errs...)
}

// scanDir lists the *.mmdb regular files of dir (symbolic links
// followed). A missing directory is an empty one.
func scanDir(dir string) (map[string]fs.FileInfo, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list geoip directory %q: %w", dir, err)
	}
	files := make(map[string]fs.FileInfo)
	for _, e := range entries {
		if !strings.EqualFold(filepath.Ext(e.Name()), ".mmdb") {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil || !fi.Mode().IsRegular() {
			continue // vanished meanwhile, or a directory named *.mmdb
		}
		files[e.Name()] = fi
	}
	return files, nil
}

// sameVersion reports whether two stats are of the same file version:
// same file (inode), size and modification time.
func sameVersion(a, b fs.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) &&
		a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// reload brings the database set in line with Dir: new and changed files
// are opened, removed ones dropped. A file that fails to open is logged
// once per version and the previous version of it, if any, is kept. The
// new set is swapped in under the write lock, so no lookup runs on a
// reader while it is closed.
func (g *Geo) reload() error {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	files, err := scanDir(g.cfg.Dir)
	if err != nil {
		g.m.reloads.WithLabelValues("error").Inc()
		return err
	}
	g.mu.RLock()
	current := slices.Clone(g.dbs)
	g.mu.RUnlock()
	byName := make(map[string]*database, len(current))
	for _, d := range current {
		byName[d.name] = d
	}
	var next, retired []*database
	changed := false
	for name, fi := range files {
		old := byName[name]
		if old != nil && sameVersion(old.stat, fi) || sameVersion(g.tried[name], fi) {
			if old != nil {
				next = append(next, old)
			}
			continue
		}
		g.tried[name] = fi
		d, err := openDatabase(filepath.Join(g.cfg.Dir, name), fi)
		if err != nil {
			g.m.reloads.WithLabelValues("error").Inc()
			g.log.Warn("geoip database not loaded", "file", name, "kept_previous", old != nil, "error", err)
			if old != nil {
				next = append(next, old)
			}
			continue
		}
		g.m.reloads.WithLabelValues("ok").Inc()
		g.log.Info("geoip database loaded", "file", name, "kind", d.kind.String(),
			"type", d.reader.Metadata.DatabaseType, "built", d.reader.Metadata.BuildTime())
		next = append(next, d)
		if old != nil {
			retired = append(retired, old)
		}
		changed = true
	}
	for name, d := range byName {
		if _, ok := files[name]; !ok {
			g.log.Info("geoip database removed", "file", name)
			retired = append(retired, d)
			changed = true
		}
	}
	for name := range g.tried {
		if _, ok := files[name]; !ok {
			delete(g.tried, name)
		}
	}
	if !changed {
		return nil
	}
	slices.SortFunc(next, func(a, b *database) int { return cmp.Compare(a.name, b.name) })
	g.mu.Lock()
	g.dbs = next
	g.mu.Unlock()
	for _, d := range retired {
		d.close()
	}
	g.m.databases.Set(float64(len(next)))
	return nil
}
