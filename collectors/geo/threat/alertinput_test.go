package threat

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store/record"
)

// TestListsMatchName: Lists is the ioc rule's matcher: a name or a parent
// domain on the list in force, the entry and its line; Generation counts
// the loads. No watch, or a watch with no load yet: nothing matches.
func TestListsMatchName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ioc.txt")
	if err := os.WriteFile(path, []byte("# list\nevil.test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded := NewWatch(slog.New(slog.DiscardHandler), "ioc", path, time.Hour, LoadList, nil)
	if err := loaded.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = loaded.Stop() })
	unloaded := NewWatch(slog.New(slog.DiscardHandler), "ioc", path, time.Hour, LoadList, nil)
	tests := []struct {
		desc    string
		lists   Lists
		name    string
		want    record.IOCHit
		wantOK  bool
		wantGen int64
	}{
		{desc: "parent listed", lists: Lists{IOCWatch: loaded}, name: "a.evil.test", want: record.IOCHit{Entry: "evil.test", List: path, Line: 2}, wantOK: true, wantGen: 1},
		{desc: "not listed", lists: Lists{IOCWatch: loaded}, name: "good.test", wantGen: 1},
		{desc: "not loaded yet", lists: Lists{IOCWatch: unloaded}, name: "evil.test"},
		{desc: "no watch", name: "evil.test"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, ok := tt.lists.MatchName(tt.name)
			if diff := cmp.Diff(got, tt.want); diff != "" || ok != tt.wantOK {
				t.Errorf("MatchName(%q) = %v (-got, +want):\n%s", tt.name, ok, diff)
			}
			if g := tt.lists.Generation(); g != tt.wantGen {
				t.Errorf("Generation() = %d, want %d", g, tt.wantGen)
			}
		})
	}
}
