package provider

import "strings"

// Reasoning markup. Models of the Qwen3 / DeepSeek-R1 family write their
// reasoning between these tags in the ordinary content; the assistant
// is advisory and shows only the answer.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// StripThink removes reasoning markup from a whole text: every
// <think>…</think> region with its tags, an unclosed <think> and
// everything after it (a reasoning cut by max_tokens), and any stray
// </think> (a template that opened the tag in the prompt leaves only
// the closer). Leading whitespace of the result is dropped, since models
// put blank lines after </think>. It is the reference the streaming
// ThinkStripper must equal, chunked at any byte boundary.
func StripThink(s string) string {
	var b strings.Builder
	for {
		o := strings.Index(s, thinkOpen)
		c := strings.Index(s, thinkClose)
		if o < 0 && c < 0 {
			b.WriteString(s)
			break
		}
		if c >= 0 && (o < 0 || c < o) {
			b.WriteString(s[:c])
			s = s[c+len(thinkClose):]
			continue
		}
		b.WriteString(s[:o])
		s = s[o+len(thinkOpen):]
		end := strings.Index(s, thinkClose)
		if end < 0 {
			break
		}
		s = s[end+len(thinkClose):]
	}
	return strings.TrimLeft(b.String(), " \t\r\n")
}

// ThinkStripper is StripThink for a stream: Write takes chunks as they
// come and returns the visible text they complete; Flush returns what
// was held back at the end. A chunk may end in the middle of a tag; the
// possible tag prefix is held until the next chunk decides it.
type ThinkStripper struct {
	inside  bool   // between <think> and </think>
	hold    string // a tail that may be the start of a tag
	started bool   // visible text has been emitted (leading blanks are done)
}

// Write feeds one chunk and returns the visible text it releases.
func (t *ThinkStripper) Write(chunk string) string {
	s := t.hold + chunk
	t.hold = ""
	var out strings.Builder
	for s != "" {
		if t.inside {
			end := strings.Index(s, thinkClose)
			if end < 0 {
				t.hold = tagTail(s, thinkClose)
				break
			}
			s = s[end+len(thinkClose):]
			t.inside = false
			continue
		}
		o := strings.Index(s, thinkOpen)
		c := strings.Index(s, thinkClose)
		if o < 0 && c < 0 {
			t.hold = tagTail(s, thinkOpen, thinkClose)
			out.WriteString(s[:len(s)-len(t.hold)])
			break
		}
		if c >= 0 && (o < 0 || c < o) {
			out.WriteString(s[:c])
			s = s[c+len(thinkClose):]
			continue
		}
		out.WriteString(s[:o])
		s = s[o+len(thinkOpen):]
		t.inside = true
	}
	return t.visible(out.String())
}

// Flush ends the stream: a held partial tag outside reasoning was text
// after all; anything inside an unclosed <think> is dropped.
func (t *ThinkStripper) Flush() string {
	h := t.hold
	t.hold = ""
	if t.inside {
		return ""
	}
	return t.visible(h)
}

func (t *ThinkStripper) visible(s string) string {
	if !t.started {
		s = strings.TrimLeft(s, " \t\r\n")
		t.started = s != ""
	}
	return s
}

// tagTail returns the longest suffix of s that is a proper prefix of
// one of tags: the bytes that could still become a tag. A tag starting
// earlier than len(tag) bytes from the end would be complete and found
// by strings.Index, so only the last few bytes need looking at.
func tagTail(s string, tags ...string) string {
	longest := 0
	for _, tag := range tags {
		longest = max(longest, len(tag)-1)
	}
	for k := max(0, len(s)-longest); k < len(s); k++ {
		if s[k] != '<' {
			continue
		}
		for _, tag := range tags {
			if len(s)-k < len(tag) && strings.HasPrefix(tag, s[k:]) {
				return s[k:]
			}
		}
	}
	return ""
}
