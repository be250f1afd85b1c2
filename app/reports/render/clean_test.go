package render

import (
	"math"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ascii unchanged", "fw-01 <b>", "fw-01 <b>"},
		{"turkish unchanged", "İstanbul-Şişli ğüı", "İstanbul-Şişli ğüı"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"controls become spaces", "a\x00b\nc\td\x1b", "a b c d "},
		{"bidi override is shown, not obeyed", "abc\u202Egnp.exe", "abc\uFFFDgnp.exe"},
		{"emoji past the BMP", "sw😀1", "sw\uFFFD1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := clean(tc.in); got != tc.want {
				t.Errorf("clean(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestCleanedTextInBothRenderings: a name that needs cleaning reads the
// same, cleaned, in the HTML and the PDF.
func TestCleanedTextInBothRenderings(t *testing.T) {
	r := testReport()
	r.Sections[4].Blocks[0].Table.Rows[0][0] = "sw\u202E01😀\xff"
	want := "sw\uFFFD01\uFFFD\uFFFD"
	if !strings.Contains(string(renderHTML(t, r)), "<td>"+want+"</td>") {
		t.Errorf("HTML lacks cell %q", want)
	}
	if text := pdfText(t, pdfFile(t, r)); !strings.Contains(text, want) {
		t.Errorf("PDF lacks %q", want)
	}
}

// TestPageCountAliasNotInData: the page-count placeholder cannot be
// spelt by the data.
func TestPageCountAliasNotInData(t *testing.T) {
	r := testReport()
	r.Sections[4].Blocks[0].Table.Rows[0][0] = "{nb}"
	r.Sections[4].Blocks[0].Table.Rows[1][0] = "x\x01nb\x01"
	text := pdfText(t, pdfFile(t, r))
	for _, w := range []string{"{nb}", "x nb ", "Page 1 of 2", "Page 2 of 2"} {
		if !strings.Contains(text, w) {
			t.Errorf("PDF lacks %q", w)
		}
	}
}

// TestNaNModel: a model json cannot encode has no data hash; the footer
// says so and both renderers still print.
func TestNaNModel(t *testing.T) {
	r := testReport()
	r.Sections[1].Blocks[0].Chart.Series[0].Values[3] = math.NaN()
	const want = "Data SHA-256: unavailable"
	if !strings.Contains(string(renderHTML(t, r)), want) {
		t.Errorf("HTML lacks %q", want)
	}
	if text := pdfText(t, pdfFile(t, r)); !strings.Contains(text, want) {
		t.Errorf("PDF lacks %q", want)
	}
}
