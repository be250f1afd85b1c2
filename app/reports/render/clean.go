package render

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"netmon/app/reports/model"
)

// clean makes a string from the data safe to print in both renderers:
// invalid UTF-8 (which fpdf panics on) and bidirectional overrides (which
// can make a name read as another, "Trojan Source") become U+FFFD, other
// control characters a space, and characters past the Basic Multilingual
// Plane (emoji) U+FFFD too: fpdf's UTF-8 fonts address only the BMP (it
// panics past it), and both renderers print the same text. html/template
// still escapes the result.
func clean(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return cleanSlow(s)
		}
	}
	return s // printable ASCII, the usual case
}

func cleanSlow(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r > 0xFFFF, r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
			return utf8.RuneError
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
}

func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = clean(s)
	}
	return out
}

func cleanFigures(fs []model.Figure) []model.Figure {
	out := make([]model.Figure, len(fs))
	for i, f := range fs {
		out[i] = model.Figure{Label: clean(f.Label), Value: clean(f.Value), Note: clean(f.Note)}
	}
	return out
}

// cleanChart copies c's strings cleaned; the values are shared.
func cleanChart(c *model.Chart) *model.Chart {
	out := &model.Chart{Kind: c.Kind, Title: clean(c.Title), Unit: c.Unit, Labels: cleanAll(c.Labels), Series: make([]model.Series, len(c.Series))}
	for i, s := range c.Series {
		out.Series[i] = model.Series{Name: clean(s.Name), Values: s.Values}
	}
	return out
}
