package provider

import (
	"strings"
	"testing"
)

// stripChunked feeds s to a ThinkStripper in pieces ending at cuts.
func stripChunked(s string, cuts []int) string {
	var t ThinkStripper
	var b strings.Builder
	prev := 0
	for _, c := range cuts {
		if c <= prev || c >= len(s) {
			continue
		}
		b.WriteString(t.Write(s[prev:c]))
		prev = c
	}
	b.WriteString(t.Write(s[prev:]))
	b.WriteString(t.Flush())
	return b.String()
}

// TestStripThink: the whole-text reference on the cases that matter.
func TestStripThink(t *testing.T) {
	cases := map[string]string{
		"plain":                                 "plain",
		"<think>plan</think>answer":             "answer",
		"<think>plan</think>\n\n  answer":       "answer",
		"a<think>x</think>b<think>y</think>c":   "abc",
		"answer<think>cut by max_tokens":        "answer",
		"stray</think> closer":                  "stray closer",
		"template opened it</think>\n\nanswer":  "template opened it\n\nanswer",
		"<think>nested <think> x</think> after": "after",
		"a < b and <thinking> is not the tag":   "a < b and <thinking> is not the tag",
		"ends with a partial tag <thi":          "ends with a partial tag <thi",
		"<THINK>upper case is text</THINK>":     "<THINK>upper case is text</THINK>",
		"":                                      "",
		"   \n":                                 "",
		"x <think></think> y":                   "x  y",
	}
	for in, want := range cases {
		if got := StripThink(in); got != want {
			t.Errorf("StripThink(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestThinkStripperEveryCut: every single cut and every pair of cuts of
// a text full of tag edges gives the reference result.
func TestThinkStripperEveryCut(t *testing.T) {
	texts := []string{
		"<think>a</think>b",
		"  <think>\nplan\n</think>\n\nThe answer</think> is <think>hidden",
		"x<</think>y<<think>z</think></think>w<thin",
		"<think><think></think>visible</th",
	}
	for _, s := range texts {
		want := StripThink(s)
		for i := 0; i <= len(s); i++ {
			for j := i; j <= len(s); j++ {
				if got := stripChunked(s, []int{i, j}); got != want {
					t.Fatalf("%q cut at %d,%d: %q, want %q", s, i, j, got, want)
				}
			}
		}
	}
}

// TestThinkStripperHoldsLittle: only a possible tag prefix is held
// back, so text reaches the console as it comes.
func TestThinkStripperHoldsLittle(t *testing.T) {
	var ts ThinkStripper
	if got := ts.Write("Latency rose by 40 ms <"); got != "Latency rose by 40 ms " {
		t.Errorf("held too much: %q", got)
	}
	if got := ts.Write("b>"); got != "<b>" {
		t.Errorf("released %q, want %q", got, "<b>")
	}
}

// FuzzThinkStripper proves the streaming stripper equal to StripThink
// on any text split at any byte boundaries.
func FuzzThinkStripper(f *testing.F) {
	f.Add("<think>plan</think>answer", []byte{3, 9})
	f.Add("a</th<think>ink>b</think>c<think", []byte{1, 2, 3, 4, 5})
	f.Add("\n\n<think>x</think>\n y", []byte{0, 7})
	f.Fuzz(func(t *testing.T, s string, cuts []byte) {
		var at []int
		pos := 0
		for _, c := range cuts {
			pos += int(c)
			at = append(at, pos)
		}
		if got, want := stripChunked(s, at), StripThink(s); got != want {
			t.Fatalf("chunked %q at %v = %q, whole = %q", s, at, got, want)
		}
	})
}
