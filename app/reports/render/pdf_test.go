package render

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"netmon/app/reports/model"
)

// poppler runs a poppler-utils tool. They are in the Makefile's APT_DEPS
// (make deps installs them); a machine without them fails the test, on CI
// and off it, because the PDF is only proven by reading it back.
func poppler(t testing.TB, tool string, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Fatalf("%s not found: install poppler-utils (make deps; it is in the Makefile's APT_DEPS)", tool)
	}
	out, err := exec.Command(tool, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return out
}

// pdfFile renders r to a temporary file and returns its path.
func pdfFile(t testing.TB, r *model.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := PDF(&b, r); err != nil {
		t.Fatalf("PDF: %v", err)
	}
	path := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var spaces = regexp.MustCompile(`\s+`)

// flat collapses whitespace: pdftotext -layout pads columns with spaces.
func flat(s string) string { return spaces.ReplaceAllString(s, " ") }

func pdfText(t testing.TB, path string) string {
	return string(poppler(t, "pdftotext", "-layout", "-enc", "UTF-8", path, "-"))
}

func pdfPages(t testing.TB, path string) int {
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)$`).FindSubmatch(poppler(t, "pdfinfo", path))
	if m == nil {
		t.Fatal("pdfinfo printed no page count")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func TestPDFText(t *testing.T) {
	r := testReport()
	path := pdfFile(t, r)
	text := flat(pdfText(t, path))

	// Every string of the model, and every text of the HTML page, reads
	// the same in the PDF.
	for _, w := range wantStrings(r) {
		if !strings.Contains(text, flat(w)) {
			t.Errorf("PDF text lacks model string %q", w)
		}
	}
	for _, w := range parseHTML(t, renderHTML(t, r)).texts {
		if !strings.Contains(text, flat(w)) {
			t.Errorf("PDF text lacks HTML text %q", w)
		}
	}

	// Letters outside Latin-1 survive embedding and extraction.
	for _, w := range []string{"ş", "ğ", "ı", "İ", "é", "ü", "ß", "Şişli-ap-ğüı", "İstanbul-çekirdek-sw01"} {
		if !strings.Contains(text, w) {
			t.Errorf("PDF text lacks %q", w)
		}
	}

	// The fixture fits two pages: charts and figures on the first,
	// tables, the empty note and the list on the second.
	const wantPages = 2
	if got := pdfPages(t, path); got != wantPages {
		t.Errorf("pages = %d, want %d", got, wantPages)
	}
	for n := 1; n <= wantPages; n++ {
		if w := fmt.Sprintf("Page %d of %d", n, wantPages); !strings.Contains(text, w) {
			t.Errorf("PDF text lacks %q", w)
		}
	}
	if got := strings.Count(text, "Data SHA-256: "+r.DataSHA256()); got != wantPages {
		t.Errorf("data SHA-256 footer on %d pages, want %d", got, wantPages)
	}
}

// TestPDFPagesDrawn rasterises every page and counts ink, so a page that
// came out blank (only header and footer) fails.
func TestPDFPagesDrawn(t *testing.T) {
	path := pdfFile(t, testReport())
	dir := t.TempDir()
	poppler(t, "pdftoppm", "-r", "30", "-png", path, filepath.Join(dir, "p"))
	files, _ := filepath.Glob(filepath.Join(dir, "p-*.png"))
	if len(files) != 2 {
		t.Fatalf("pdftoppm wrote %d pages, want 2", len(files))
	}
	for _, name := range files {
		pct := inkPercent(t, name)
		// Measured at 30 dpi: a page with only the running header and
		// footer inks 0.4 % of its pixels, the first page's heading alone
		// 1.4 %, the fixture's pages about 10 %.
		if pct < minInkPct {
			t.Errorf("%s: %.2f %% of pixels inked, want >= %.1f %% (blank page?)", filepath.Base(name), pct, minInkPct)
		}
	}
}

// inkPercent is the share of pixels of a PNG that are not near white.
func inkPercent(t testing.TB, name string) float64 {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ink, all := 0, 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			all++
			if r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				ink++
			}
		}
	}
	return 100 * float64(ink) / float64(all)
}

const minInkPct = 2.0
