package spool

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func open(t *testing.T, path string, max int) *Queue {
	t.Helper()
	q, skipped, dropped, err := Open(path, max)
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 0 || dropped != 0 {
		t.Fatalf("open: skipped %d dropped %d, want 0 0", skipped, dropped)
	}
	t.Cleanup(func() { _ = q.Close() })
	return q
}

func batch(i int) []byte { return []byte(fmt.Sprintf(`{"seq":%d}`, i)) }

// drain pops everything and returns it in order.
func drain(t *testing.T, q *Queue) []string {
	t.Helper()
	var out []string
	for {
		v, ok, err := q.Peek()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, string(v))
		if err := q.Pop(); err != nil {
			t.Fatal(err)
		}
	}
}

func want(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, string(batch(i)))
	}
	return out
}

func TestFIFOAcrossRestarts(t *testing.T) {
	tests := []struct {
		desc       string
		push, pop  int // before the restart
		wantAfter  []string
		wantLength int
	}{
		{"nothing consumed", 5, 0, want(1, 5), 5},
		{"some consumed, no compaction yet", 5, 2, want(3, 5), 3},
		{"more than half consumed (compacted)", 6, 4, want(5, 6), 2},
		{"all consumed", 3, 3, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.state.json.queue.jsonl")
			q := open(t, path, 0)
			for i := 1; i <= tt.push; i++ {
				if _, err := q.Push(batch(i)); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < tt.pop; i++ {
				if err := q.Pop(); err != nil {
					t.Fatal(err)
				}
			}
			if err := q.Close(); err != nil {
				t.Fatal(err)
			}
			q2 := open(t, path, 0)
			// Popped entries that were not compacted away come back: the
			// hub deduplicates them by seq. What must hold is the order
			// and that nothing unsent is lost.
			got := drain(t, q2)
			if len(got) < tt.wantLength {
				t.Fatalf("got %d entries, want at least %d", len(got), tt.wantLength)
			}
			if diff := cmp.Diff(got[len(got)-tt.wantLength:], tt.wantAfter, cmpNilEmpty); diff != "" {
				t.Errorf("after restart (-got, +want):\n%s", diff)
			}
			if diff := cmp.Diff(got, want(tt.push-len(got)+1, tt.push), cmpNilEmpty); diff != "" {
				t.Errorf("order (-got, +want):\n%s", diff)
			}
		})
	}
}

var cmpNilEmpty = cmp.Transformer("nilEmpty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

func TestCapDropsOldest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.jsonl")
	q := open(t, path, Max)
	total := 0
	for i := 1; i <= Max+7; i++ {
		n, err := q.Push(batch(i))
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != 7 || q.Len() != Max {
		t.Fatalf("dropped %d len %d, want 7 %d", total, q.Len(), Max)
	}
	_ = q.Close()
	// The drops are on disk at once: a restart does not bring them back.
	q2 := open(t, path, Max)
	if diff := cmp.Diff(drain(t, q2), want(8, Max+7)); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
}

func TestOpenDropsBeyondMax(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.jsonl")
	q := open(t, path, 10)
	for i := 1; i <= 10; i++ {
		if _, err := q.Push(batch(i)); err != nil {
			t.Fatal(err)
		}
	}
	_ = q.Close()
	q2, skipped, dropped, err := Open(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	if skipped != 0 || dropped != 6 {
		t.Fatalf("skipped %d dropped %d, want 0 6", skipped, dropped)
	}
	if diff := cmp.Diff(drain(t, q2), want(7, 10)); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
}

func TestDamagedFile(t *testing.T) {
	tests := []struct {
		desc        string
		content     string
		wantSkipped int
		want        []string
	}{
		{"torn last line", `{"seq":1}` + "\n" + `{"seq":2}` + "\n" + `{"se`, 1, want(1, 2)},
		{"torn line that happens to be valid JSON is still cut", `{"seq":1}` + "\n" + `12`, 1, want(1, 1)},
		{"corrupt middle line", `{"seq":1}` + "\n" + "garbage\n" + `{"seq":2}` + "\n", 1, want(1, 2)},
		{"blank lines ignored", "\n" + `{"seq":1}` + "\n\n", 0, want(1, 1)},
		{"empty file", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "q.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			q, skipped, _, err := Open(path, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if skipped != tt.wantSkipped {
				t.Errorf("skipped %d, want %d", skipped, tt.wantSkipped)
			}
			// A new append after the repair must be a clean line.
			if _, err := q.Push(batch(9)); err != nil {
				t.Fatal(err)
			}
			_ = q.Close()
			q2 := open(t, path, 0)
			if diff := cmp.Diff(drain(t, q2), append(tt.want, string(batch(9)))); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}

func TestPushRefusesMultiLine(t *testing.T) {
	q := open(t, filepath.Join(t.TempDir(), "q.jsonl"), 0)
	for _, v := range []string{"{\"a\":\n1}", "not json", ""} {
		if _, err := q.Push([]byte(v)); err == nil {
			t.Errorf("Push(%q): no error", v)
		}
	}
	if q.Len() != 0 {
		t.Fatalf("len %d", q.Len())
	}
}

func TestFileMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes")
	}
	path := filepath.Join(t.TempDir(), "q.jsonl")
	q := open(t, path, 2)
	for i := 1; i <= 3; i++ { // the third push rewrites the file
		if _, err := q.Push(batch(i)); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}
