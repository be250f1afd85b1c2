package threat

import (
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

const sample = `# a hosts file
127.0.0.1 localhost
0.0.0.0 evil.test tracker.example  # trailing comment
! an ad-block comment
[Adblock Plus 2.0]
||ads.example.org^
||Bad.Example.NET^$third-party
||wild*.example^
@@||allowed.example^
plain.example.
198.51.100.66
2001:db8::66
notadomain
has space here
a..b.example

`

// TestPublicSuffixEntriesRefused: an entry that is a public suffix would
// mark every name registered under it (issue 28 item 9).
func TestPublicSuffixEntriesRefused(t *testing.T) {
	l, err := ParseList(strings.NewReader("co.uk\n0.0.0.0 github.io evil.co.uk\n||com.au^\nuk\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stats{Lines: 4, Domains: 1, PublicSuffixes: 3, Junk: 1}); l.Stats != want {
		t.Errorf("stats %+v, want %+v", l.Stats, want)
	}
	for name, want := range map[string]bool{"bbc.co.uk": false, "someone.github.io": false, "shop.com.au": false, "x.evil.co.uk": true} {
		if _, ok := l.Match(name); ok != want {
			t.Errorf("Match(%q) = %v, want %v", name, ok, want)
		}
	}
}

func TestParseList(t *testing.T) {
	l, err := ParseList(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Lines: 16, Domains: 5, IPs: 2, Comments: 3, Junk: 5}
	if diff := cmp.Diff(l.Stats, want); diff != "" {
		t.Errorf("stats (-got, +want):\n%s", diff)
	}
	for _, tc := range []struct {
		desc, name string
		ok         bool
		entry      string
		line       int
	}{
		{"hosts entry", "evil.test", true, "evil.test", 3},
		{"parent walk", "a.b.EVIL.test.", true, "evil.test", 3},
		{"second name of a hosts line", "x.tracker.example", true, "tracker.example", 3},
		{"ad-block", "cdn.ads.example.org", true, "ads.example.org", 6},
		{"ad-block with options, case folded", "bad.example.net", true, "bad.example.net", 7},
		{"plain with trailing dot", "plain.example", true, "plain.example", 10},
		{"sibling of a listed name", "example.org", false, "", 0},
		{"localhost is a sink", "localhost", false, "", 0},
		{"exception rule is junk, not a listing", "allowed.example", false, "", 0},
		{"suffix that is not a label boundary", "notevil.test", false, "", 0},
		{"empty", "", false, "", 0},
	} {
		h, ok := l.Match(tc.name)
		if ok != tc.ok || h.Entry != tc.entry || h.Line != tc.line {
			t.Errorf("%s: Match(%q) = %+v, %v; want entry %q line %d, %v", tc.desc, tc.name, h, ok, tc.entry, tc.line, tc.ok)
		}
	}
	if h, ok := l.MatchAddr(netip.MustParseAddr("198.51.100.66")); !ok || h.Line != 11 {
		t.Errorf("MatchAddr v4 = %+v, %v", h, ok)
	}
	if h, ok := l.MatchAddr(netip.MustParseAddr("2001:db8::66")); !ok || h.Line != 12 {
		t.Errorf("MatchAddr v6 = %+v, %v", h, ok)
	}
	if _, ok := l.MatchAddr(netip.MustParseAddr("127.0.0.1")); ok {
		t.Error("the hosts sink address matched")
	}
}

func TestCategories(t *testing.T) {
	c, err := ParseCategories(strings.NewReader("# cats\nexample.com search\nvideo.example.com,streaming media\nbroken\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Stats, Stats{Lines: 4, Domains: 2, Comments: 1, Junk: 1}); diff != "" {
		t.Errorf("stats (-got, +want):\n%s", diff)
	}
	for name, want := range map[string]string{"www.example.com": "search", "a.video.example.com": "streaming media", "example.org": ""} {
		if got, _ := c.Category(name); got != want {
			t.Errorf("Category(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestWatchReload: an edited file is reloaded on the next check; an
// unreadable one keeps the last good list and says so in the metrics.
func TestWatchReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ioc.txt")
	write := func(s string, mtime time.Time) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	write("evil.test\n", t0)
	reg := prometheus.NewRegistry()
	w := NewWatch(slog.New(slog.DiscardHandler), "ioc", path, time.Hour, LoadList, reg)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	if _, ok := w.Current().Match("evil.test"); !ok {
		t.Fatal("first load: evil.test not listed")
	}
	w.Check()
	if w.Loads() != 1 {
		t.Fatalf("an unchanged file was reloaded: %d loads", w.Loads())
	}
	write("worse.test\n", t0.Add(time.Minute))
	w.Check()
	if _, ok := w.Current().Match("evil.test"); ok || w.Loads() != 2 {
		t.Fatalf("after the edit: evil.test still listed or %d loads", w.Loads())
	}
	if _, ok := w.Current().Match("a.worse.test"); !ok {
		t.Fatal("after the edit: worse.test not listed")
	}
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, t0.Add(2*time.Minute), t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		// root reads a 0000 file: make it unreadable by removing it.
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	w.Check()
	if _, ok := w.Current().Match("worse.test"); !ok {
		t.Fatal("an unreadable file dropped the last good list")
	}
	if got := testutil.ToFloat64(w.m.stale); got != 1 {
		t.Errorf("stale gauge %v, want 1", got)
	}
	if got := testutil.ToFloat64(w.m.errors); got != 1 {
		t.Errorf("load errors %v, want 1", got)
	}
}

func FuzzParseList(f *testing.F) {
	f.Add(sample)
	f.Add("||a.b^\n0.0.0.0 x.y\n")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseList(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		if l.Stats.Domains > l.Stats.Lines*64 {
			t.Fatalf("more domains than possible: %+v", l.Stats)
		}
		for name := range l.names {
			if _, ok := l.Match(name); !ok {
				t.Fatalf("listed %q does not match itself", name)
			}
		}
	})
}
