package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestBudget: 1 000 facts into 4 KB: the bytes stay within 4 096, the
// message says how many facts were left out, and no kept fact has a
// lower priority than a left-out one.
func TestBudget(t *testing.T) {
	recs := loadRecords(t)
	ps := New()
	facts := recordFacts(recs, ps)
	fence := fenceOf("0123456789abcdef")
	c, err := build(SystemPrompt, facts, 4096, ps, fence)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Bytes) > 4096 {
		t.Fatalf("%d bytes, budget 4096", len(c.Bytes))
	}
	t.Logf("4 KiB budget: %d bytes, %d facts kept, %d left out", len(c.Bytes), c.Included, c.Omitted)
	if c.Included+c.Omitted != 1000 || c.Included == 0 {
		t.Fatalf("included %d + omitted %d", c.Included, c.Omitted)
	}
	msg := c.Messages[0].Content
	if want := fmt.Sprintf("Facts left out to fit the context budget (lowest priority first): %d.\n", c.Omitted); !strings.Contains(msg, want) {
		t.Fatalf("message does not say %q", want)
	}
	// Priorities are i%10: the 100 facts of priority 9 come first, in
	// their order, so the kept ones are records 9, 19, 29, …
	for k, f := range c.Preview.Facts {
		if f.Priority != 9 {
			t.Fatalf("kept fact %d has priority %d, want 9", k, f.Priority)
		}
		if want := "Login on agent " + ps.Pseudonymise(recs[10*k+9].Host) + " by " + ps.Pseudonymise(recs[10*k+9].User); f.Text != want {
			t.Fatalf("kept fact %d is %q, want %q", k, f.Text, want)
		}
	}
	if got := strings.Count(msg, "\n"+fence.Open+"\n"); got != c.Included {
		t.Fatalf("%d data blocks for %d facts", got, c.Included)
	}
	// The hash is of the exact bytes, which are system, blank line, message.
	sum := sha256.Sum256([]byte(SystemPrompt + "\n\n" + msg))
	if c.SHA256 != hex.EncodeToString(sum[:]) || string(c.Bytes) != SystemPrompt+"\n\n"+msg || c.Preview.Bytes != len(c.Bytes) {
		t.Fatal("Bytes/SHA256/preview do not describe system + blank line + message")
	}
}

// TestBudgetEdges: every budget from the smallest possible up fits, a
// smaller one is refused with ErrBudget, and facts are left out whole.
func TestBudgetEdges(t *testing.T) {
	fence := fenceOf("0123456789abcdef")
	facts := []Fact{
		{Source: "alerts:open", Text: "open alert", Priority: 5, Data: []Field{{Name: "rule", Value: strings.Repeat("é", 200)}}},
		{Source: "flows:top_talkers", Text: "top talker", Priority: 7},
		{Source: "health:devices", Text: "device health", Priority: 1, Data: []Field{{Name: "dev", Value: "core-sw"}}},
	}
	full, err := build("sys", facts, 1<<20, nil, fence)
	if err != nil {
		t.Fatal(err)
	}
	minimum := len("sys\n\n") + len(fmt.Sprintf(header, fence.Open, fence.Close)) + len(omittedLine(3))
	if _, err := build("sys", facts, minimum-1, nil, fence); !errors.Is(err, ErrBudget) {
		t.Fatalf("budget %d: err %v, want ErrBudget", minimum-1, err)
	}
	prev := -1
	for b := minimum; b <= len(full.Bytes); b++ {
		c, err := build("sys", facts, b, nil, fence)
		if err != nil {
			t.Fatalf("budget %d: %v", b, err)
		}
		if len(c.Bytes) > b {
			t.Fatalf("budget %d: %d bytes", b, len(c.Bytes))
		}
		if c.Included < prev {
			t.Fatalf("budget %d kept %d facts, a smaller one kept %d", b, c.Included, prev)
		}
		prev = c.Included
		// Kept facts are a prefix of the priority order 7, 5, 1.
		for k, f := range c.Preview.Facts {
			if want := []string{"flows:top_talkers", "alerts:open", "health:devices"}[k]; f.Source != want {
				t.Fatalf("budget %d: fact %d is %s, want %s", b, k, f.Source, want)
			}
		}
		dataBlocks(t, c.Messages[0].Content, fence)
	}
	if prev != 3 {
		t.Fatalf("the full size kept %d facts, want 3", prev)
	}
	if _, err := build("sys", []Fact{{Source: "Flows Top"}}, 1<<20, nil, fence); err == nil {
		t.Fatal("source with capitals and a space accepted")
	}
}

// TestPreview: the preview holds the message as sent, the facts with
// their tokens, and the token map with real values for the console.
func TestPreview(t *testing.T) {
	ps := New()
	ps.AddHost("db-01")
	c, err := Build(SystemPrompt, []Fact{{Source: "procs:new", Text: "new process on db-01", Data: []Field{{Name: "peer", Value: "10.1.1.1:5432"}}}}, 24<<10, ps)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Preview
	if p.Text != c.Messages[0].Content || len(p.Facts) != 1 || p.Facts[0].Text != "new process on host-1" ||
		p.Facts[0].Fields[0] != (Field{Name: "peer", Value: "ip-1:5432"}) {
		t.Fatalf("preview %+v", p)
	}
	if fmt.Sprint(p.Pseudonyms) != "[{host-1 host db-01} {ip-1 ip 10.1.1.1}]" {
		t.Fatalf("pseudonyms %v", p.Pseudonyms)
	}
	// Two builds draw two fences.
	d, _ := Build(SystemPrompt, nil, 24<<10, ps)
	if c.Fence == d.Fence || len(c.Fence.Open) != len("<<<DATA 0123456789abcdef>>>") {
		t.Fatalf("fences %q, %q", c.Fence.Open, d.Fence.Open)
	}
}
