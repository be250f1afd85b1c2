package render

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// FuzzRender puts one hostile string (a device, host or process name)
// everywhere a name can appear: neither renderer may fail or panic, and
// the HTML never gains markup from it.
func FuzzRender(f *testing.F) {
	for _, s := range []string{hostile, "İstanbul-Şişli ğüı", "東京-sw01", "\x00\x1b[31m", "\xff\xfe", "a\nb\tc", "\u202eevil", "😀", strings.Repeat("W", 400), `"><svg onload=alert(1)>`, "}}{{.}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := testReport()
		r.Title, r.Site, r.Hub = s, s, s
		r.Sections[0].Blocks[1].Figures[0].Value = s
		r.Sections[1].Blocks[0].Chart.Labels[0] = s
		r.Sections[2].Blocks[0].Chart.Series[0].Name = s
		r.Sections[3].Blocks[0].Table.Rows[0][0] = s
		r.Sections[3].Blocks[0].Table.Caption = s
		r.Sections[6].Blocks[0].List[0] = s
		var h bytes.Buffer
		if err := HTML(&h, r); err != nil {
			t.Fatalf("HTML: %v", err)
		}
		if n := bytes.Count(h.Bytes(), []byte("<script")); n != 0 {
			t.Fatalf("HTML has %d <script", n)
		}
		if err := PDF(io.Discard, r); err != nil {
			t.Fatalf("PDF: %v", err)
		}
	})
}
