package reports

import (
	"bytes"
	"fmt"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"netmon/app/reports/model"
	"netmon/app/reports/render"
	"netmon/store"
	"netmon/store/storetest"
)

// TestRenderedFromSeededData is issue 31's "pdftotext of the PDF contains
// the same numbers as the HTML" and "pdftoppm renders every page (no
// blank page)", on reports built from the seeded database of the builder
// tests (both databases), rendered by the real renderers.
func TestRenderedFromSeededData(t *testing.T) {
	for _, tool := range []string{"pdftotext", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: install poppler-utils (make deps)", tool)
		}
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		for _, typ := range []string{model.TypeTraffic, model.TypeEnterprise, model.TypeCompliance} {
			t.Run(typ, func(t *testing.T) {
				deps := storeDeps(db, &fakeSLA{f: badSLA}, fakeHealth{lowHealth})
				deps.ISMS = fakeISMS{}
				r := build(t, deps, typ, "")
				var h, p bytes.Buffer
				if err := render.HTML(&h, r); err != nil {
					t.Fatal(err)
				}
				if err := render.PDF(&p, r); err != nil {
					t.Fatal(err)
				}
				dir := t.TempDir()
				pdf := filepath.Join(dir, "report.pdf")
				if err := os.WriteFile(pdf, p.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command("pdftotext", "-layout", "-enc", "UTF-8", pdf, "-").Output()
				if err != nil {
					t.Fatal(err)
				}
				pdfText, htmlText := flatText(string(out)), flatText(html.UnescapeString(tags.ReplaceAllString(h.String(), " ")))
				n := 0
				for _, w := range figuresOf(r) {
					n++
					if !strings.Contains(pdfText, w) {
						t.Errorf("the PDF lacks %q", w)
					}
					if !strings.Contains(htmlText, w) {
						t.Errorf("the HTML lacks %q", w)
					}
				}
				if n < 20 {
					t.Errorf("only %d figures compared", n)
				}
				if _, err := exec.Command("pdftoppm", "-r", "20", "-png", pdf, filepath.Join(dir, "page")).Output(); err != nil {
					t.Fatal(err)
				}
				pages, _ := filepath.Glob(filepath.Join(dir, "page*.png"))
				if len(pages) == 0 {
					t.Fatal("pdftoppm rendered no page")
				}
				for _, pg := range pages {
					if ink := inked(t, pg); ink < 0.01 {
						t.Errorf("%s: %.2f %% inked, a blank page", filepath.Base(pg), ink*100)
					}
				}
			})
		}
	})
}

var (
	tags   = regexp.MustCompile(`<[^>]*>`)
	blanks = regexp.MustCompile(`\s+`)
)

func flatText(s string) string { return blanks.ReplaceAllString(s, " ") }

// figuresOf is every figure value and table cell of r (the numbers a
// reader compares), whitespace collapsed.
func figuresOf(r *model.Report) []string {
	var out []string
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			for _, f := range b.Figures {
				out = append(out, flatText(f.Value))
			}
			if b.Table != nil {
				for _, row := range b.Table.Rows {
					for _, c := range row {
						if c = strings.TrimSpace(c); c != "" {
							out = append(out, flatText(c))
						}
					}
				}
			}
		}
	}
	return out
}

// inked is the share of a page's pixels that are not near-white.
func inked(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(fmt.Errorf("%s: %w", path, err))
	}
	b := img.Bounds()
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r+g+bl < 3*0xf000 {
				dark++
			}
		}
	}
	return float64(dark) / float64(b.Dx()*b.Dy())
}
