package geo

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReload(t *testing.T) {
	fixture := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	v1, v2 := fixture("maxmind-country.mmdb"), fixture("maxmind-country-v2.mmdb")
	// Each step changes Dir, waits until the watcher has seen the change
	// (a load, a refused load, or the file gone), then checks the answer
	// for 8.8.8.8 and 2001:4860::1 is (or, after a bad file, still is)
	// want.
	const (
		loaded = iota
		refused
		gone
	)
	steps := []struct {
		desc   string
		change func(t *testing.T, path string)
		seen   int
		want   string
	}{
		{"replaced by rename", func(t *testing.T, p string) { writeByRename(t, p, v2) }, loaded, "DE"},
		{"corrupt replacement by rename keeps the old answers", func(t *testing.T, p string) {
			writeByRename(t, p, []byte("garbage, not an mmdb"))
		}, refused, "DE"},
		{"truncated copy written in place keeps the old answers", func(t *testing.T, p string) {
			if err := os.WriteFile(p, v1[:len(v1)/2], 0o644); err != nil {
				t.Fatal(err)
			}
		}, refused, "DE"},
		{"a good file again", func(t *testing.T, p string) { writeByRename(t, p, v1) }, loaded, "US"},
		{"removed", func(t *testing.T, p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}, gone, ""},
		{"added back", func(t *testing.T, p string) { writeByRename(t, p, v2) }, loaded, "DE"},
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "country.mmdb")
	writeByRename(t, path, v1)
	const interval = 20 * time.Millisecond
	g, reg := startGeo(t, Config{Dir: dir, ReloadInterval: interval})
	if c, _, _ := g.Lookup(addr("8.8.8.8")); c != "US" {
		t.Fatalf("before any change: country %q, want US", c)
	}
	loads := func(result string) float64 {
		return metricValue(t, reg, "netmon_geo_database_loads_total", "result", result)
	}
	for _, s := range steps {
		t.Run(s.desc, func(t *testing.T) {
			ok, failed := loads("ok"), loads("error")
			s.change(t, path)
			eventually(t, 5*time.Second, "the watcher to see the change", func() bool {
				switch s.seen {
				case loaded:
					return loads("ok") == ok+1
				case refused:
					return loads("error") > failed
				}
				return metricValue(t, reg, "netmon_geo_databases") == 0
			})
			time.Sleep(3 * interval) // a later tick must not change the answer either
			if s.seen == refused && loads("ok") != ok {
				t.Errorf("a bad file was loaded")
			}
			for _, a := range []string{"8.8.8.8", "2001:4860::1"} {
				if c, _, _ := g.Lookup(addr(a)); c != s.want {
					t.Errorf("Lookup(%s) country %q, want %q", a, c, s.want)
				}
			}
		})
	}
}

// TestReloadUnderLoad swaps databases while lookups run: under the race
// detector this shows no lookup decodes from a closed reader.
func TestReloadUnderLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "country.mmdb")
	copyFixture(t, "maxmind-country.mmdb", dir, "country.mmdb")
	g, _ := startGeo(t, Config{Dir: dir, ReloadInterval: time.Millisecond})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if c, _, _ := g.Lookup(addr("8.8.8.8")); c != "US" && c != "DE" {
				t.Errorf("country %q during reload", c)
				return
			}
		}
	}()
	for i := range 20 {
		fixture := "maxmind-country.mmdb"
		if i%2 == 0 {
			fixture = "maxmind-country-v2.mmdb"
		}
		copyFixture(t, fixture, dir, filepath.Base(path))
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	<-done
}

// TestRestart: Stop closes the databases; Start opens them again.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	copyFixture(t, "maxmind-country.mmdb", dir, "country.mmdb")
	g := New(testLogger(t), Config{Dir: dir, ReloadInterval: time.Hour}, Deps{})
	for i := range 2 {
		if err := g.Start(); err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if c, _, _ := g.Lookup(addr("8.8.8.8")); c != "US" {
			t.Errorf("start %d: country %q, want US", i, c)
		}
		if err := g.Start(); err == nil {
			t.Errorf("start %d: a second Start succeeded", i)
		}
		for range 2 { // Stop is idempotent
			if err := g.Stop(); err != nil {
				t.Fatal(err)
			}
		}
		if g.Source() != SourceNone {
			t.Errorf("stop %d: Source() = %q", i, g.Source())
		}
	}
}

// TestPrivateCopyLeavesNothing: the private copy each load maps is
// unlinked at once, so the directory holds only the operator's files
// while databases are loaded and after they are closed.
func TestPrivateCopyLeavesNothing(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtureDir, "maxmind-country.mmdb"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeByRename(t, filepath.Join(dir, "country.mmdb"), data)
	list := func() []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	g, _ := startGeo(t, Config{Dir: dir})
	if c, _, _ := g.Lookup(addr("8.8.8.8")); c != "US" {
		t.Fatalf("country %q, want US", c)
	}
	if got := list(); len(got) != 1 || got[0] != "country.mmdb" {
		t.Fatalf("directory holds %q while loaded, want only country.mmdb", got)
	}
	if err := g.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := list(); len(got) != 1 {
		t.Fatalf("directory holds %q after Stop", got)
	}
}
