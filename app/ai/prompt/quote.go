package prompt

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The limits of quoted data.
const (
	// MaxFieldBytes caps one untrusted value (before JSON escaping);
	// a longer one is cut at a character and word boundary and ends
	// with "…".
	MaxFieldBytes = 256
	// MaxBlockBytes caps one fact's data block; fields past it are left
	// out and counted in a last "…" field.
	MaxBlockBytes = 4096
)

// Field is one untrusted value and its name (the name is ours).
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Mark, when KindHost or KindUser, says the whole value is a name of
	// that kind (Pseudonyms.Mark): it becomes one token even if it holds
	// spaces or is not registered. Empty: the value is scanned as text.
	Mark string `json:"mark,omitempty"`
}

// Fence is the per-request pair of lines that delimit untrusted data.
// Data cannot forge it: the nonce is random per request, and values are
// JSON strings with "<" and ">" escaped (\u003c), so no value can hold
// "<<<" at all.
type Fence struct{ Open, Close string }

// NewFence draws a fence with a 64-bit random nonce.
func NewFence() Fence {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return fenceOf(hex.EncodeToString(b[:]))
}

func fenceOf(nonce string) Fence {
	return Fence{Open: "<<<DATA " + nonce + ">>>", Close: "<<<END " + nonce + ">>>"}
}

// Quote renders fields as one data block: the open fence, one line with
// a JSON object of the cleaned values, the close fence, each line ended
// by "\n". Values are cleaned (Clean), pseudonymised when ps is not nil,
// and capped (MaxFieldBytes, MaxBlockBytes).
func Quote(f Fence, fields []Field, ps *Pseudonyms) string {
	s, _ := quote(f, prepare(fields, ps))
	return s
}

// prepare prepares names and values alike (Value): names are ours, but
// a caller may build one from data.
func prepare(fields []Field, ps *Pseudonyms) []Field {
	out := make([]Field, len(fields))
	for i, fd := range fields {
		out[i] = Field{Name: Value(fd.Name, ps)}
		if ps != nil && fd.Mark != "" {
			// A token, already safe: scanning it again would escape it.
			out[i].Value = ps.Mark(fd.Mark, Clean(fd.Value))
		} else {
			out[i].Value = Value(fd.Value, ps)
		}
	}
	return out
}

// quote renders prepared fields and returns how many are in the block.
func quote(f Fence, fields []Field) (string, int) {
	var b strings.Builder
	b.WriteString(f.Open)
	b.WriteString("\n{")
	n := 0
	for i, fd := range fields {
		name := jsonString(fd.Name)
		val := jsonString(fd.Value)
		// Keep room for the "more fields" note.
		if b.Len()+len(name)+len(val)+64 > MaxBlockBytes {
			left := len(fields) - i
			if n > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"…":"` + strconv.Itoa(left) + ` more fields left out"`)
			break
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(val)
		n++
	}
	b.WriteString("}\n")
	b.WriteString(f.Close)
	b.WriteByte('\n')
	return b.String(), n
}

// Value prepares one untrusted value: cleaned, pseudonymised (ps may be
// nil), links and images neutralised, capped at MaxFieldBytes. The
// result is still to be JSON-encoded.
func Value(v string, ps *Pseudonyms) string {
	v = Clean(v)
	if ps != nil {
		v = ps.Pseudonymise(v)
	}
	return truncate(Neutralise(v), MaxFieldBytes)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always encodes; < > & become \u003c…
	return string(b)
}

// Clean removes what could hide or reorder text: control characters
// (line breaks become spaces), bidi overrides and isolates, zero-width
// characters, Unicode tag characters (invisible "ASCII smuggling"), and
// invalid UTF-8 (becomes U+FFFD).
func Clean(v string) string {
	ok := true
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f {
			ok = false
			break
		}
	}
	if ok {
		return v
	}
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\r' || r == '\t' || r == 0x2028 || r == 0x2029 || r == 0x85:
			b.WriteByte(' ')
		case r < 0x20 || r >= 0x7f && r < 0xa0, hidden(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hidden(r rune) bool {
	switch {
	case r == 0x061c || r == 0x200e || r == 0x200f: // marks
	case r >= 0x202a && r <= 0x202e: // embeddings and overrides
	case r >= 0x2066 && r <= 0x2069: // isolates
	case r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff: // zero width
	case r >= 0xe0000 && r <= 0xe007f: // tags
	default:
		return false
	}
	return true
}

// Neutralise breaks markdown images and links and URLs in data, so a
// value copied into an answer cannot render or fetch anything:
// "![" → "! [", "](" → "] (", "://" → "[:]//" (the analyst's "defang").
func Neutralise(v string) string {
	if !strings.Contains(v, "![") && !strings.Contains(v, "](") && !strings.Contains(v, "://") {
		return v
	}
	return neutraliser.Replace(v)
}

var neutraliser = strings.NewReplacer("![", "! [", "](", "] (", "://", "[:]//")

// truncate caps v at max bytes plus "…", cutting at a character
// boundary and never inside a word (a token cut in two would reveal to
// the wrong value).
func truncate(v string, max int) string {
	if len(v) <= max {
		return v
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	if isNameByte(v[cut]) {
		w := cut
		for w > 0 && isNameByte(v[w-1]) && cut-w < 32 {
			w--
		}
		if w == 0 || !isNameByte(v[w-1]) {
			cut = w
		}
	}
	return v[:cut] + "…"
}
