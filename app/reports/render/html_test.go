package render

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"netmon/app/reports/model"
)

// renderHTML renders r or fails the test.
func renderHTML(t testing.TB, r *model.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatalf("HTML: %v", err)
	}
	return b.Bytes()
}

// wantStrings is every string of r a reader must find in both renderings.
func wantStrings(r *model.Report) []string {
	p := newPage(r)
	want := []string{r.Title, p.Site, p.Range, p.Generated, "Data SHA-256: " + r.DataSHA256()}
	if r.Hub != "" {
		want = append(want, "Hub: "+r.Hub)
	}
	for _, s := range r.Sections {
		want = append(want, s.Title)
		if s.Empty != "" {
			want = append(want, s.Empty)
			continue
		}
		for _, b := range s.Blocks {
			want = append(want, b.Paragraph)
			want = append(want, b.List...)
			for _, f := range b.Figures {
				want = append(want, f.Label, f.Value, f.Note)
			}
			if t := b.Table; t != nil {
				want = append(want, t.Caption, moreLine(t.More))
				for _, c := range t.Columns {
					want = append(want, c.Title)
				}
				for _, row := range t.Rows {
					want = append(want, row...)
				}
			}
			if c := b.Chart; c != nil {
				want = append(want, c.Title)
				for _, s := range c.Series {
					want = append(want, s.Name)
				}
			}
		}
	}
	out := want[:0]
	for _, s := range want {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// htmlDoc is what the tests read back from a rendered page.
type htmlDoc struct {
	texts   []string     // every text node outside <style> and <title>, trimmed
	tables  [][][]string // td texts per table
	scripts int
	attrs   []html.Attribute
	styles  []string // <style> contents
}

func parseHTML(t *testing.T, b []byte) htmlDoc {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("parse HTML: %v", err)
	}
	var d htmlDoc
	var walk func(n *html.Node, skip bool)
	walk = func(n *html.Node, skip bool) {
		switch n.Type {
		case html.TextNode:
			if s := strings.TrimSpace(n.Data); s != "" && !skip {
				d.texts = append(d.texts, s)
			}
		case html.ElementNode:
			d.attrs = append(d.attrs, n.Attr...)
			switch n.DataAtom {
			case atom.Script:
				d.scripts++
			case atom.Style:
				d.styles = append(d.styles, textOf(n))
				skip = true
			case atom.Title: // the page title and SVG tooltips: not printed text
				skip = true
			case atom.Table:
				d.tables = append(d.tables, nil)
			case atom.Tr:
				var row []string
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.DataAtom == atom.Td {
						row = append(row, textOf(c))
					}
				}
				if row != nil {
					d.tables[len(d.tables)-1] = append(d.tables[len(d.tables)-1], row)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, skip)
		}
	}
	walk(root, false)
	return d
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// externalRef matches what would make a browser fetch something: a URL
// with a scheme or a protocol-relative one, url(...) and @import.
var externalRef = regexp.MustCompile(`(?i)([a-z][a-z0-9+.-]*:)?//|url\s*\(|@import`)

func TestHTMLSelfContainedAndEscaped(t *testing.T) {
	r := testReport()
	b := renderHTML(t, r)
	d := parseHTML(t, b)

	// Nothing is loaded from elsewhere: no attribute holds a URL (the
	// hub's https URL may only appear as text), no url() or @import in CSS.
	for _, a := range d.attrs {
		if externalRef.MatchString(a.Val) {
			t.Errorf("attribute %s=%q refers outside the page", a.Key, a.Val)
		}
	}
	if len(d.styles) != 1 {
		t.Fatalf("got %d <style> elements, want 1 inline", len(d.styles))
	}
	if m := externalRef.FindString(d.styles[0]); m != "" {
		t.Errorf("inline CSS refers outside the page: %q", m)
	}
	for _, tag := range []string{"<link", "<img", "<iframe", "<object", "<embed"} {
		if bytes.Contains(b, []byte(tag)) {
			t.Errorf("page contains %s", tag)
		}
	}

	// The hostile device name is text: no script element, and its
	// escaped form is in the bytes.
	if d.scripts != 0 {
		t.Errorf("page has %d <script> elements; a device name was not escaped", d.scripts)
	}
	if !bytes.Contains(b, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
		t.Error("hostile name not found escaped")
	}

	// Every string of the model is a text of the page.
	text := "\n" + strings.Join(d.texts, "\n") + "\n"
	for _, w := range wantStrings(r) {
		if !strings.Contains(text, w) {
			t.Errorf("page text lacks %q", w)
		}
	}

	// Tables print exactly the model's cells, in order.
	var want [][][]string
	for _, s := range r.Sections {
		for _, bl := range s.Blocks {
			if bl.Table != nil {
				want = append(want, bl.Table.Rows)
			}
		}
	}
	if diff := cmp.Diff(d.tables, want); diff != "" {
		t.Errorf("table cells (-got, +want):\n%s", diff)
	}
}

// TestHTMLSections checks what each kind of block prints, one case per kind.
func TestHTMLSections(t *testing.T) {
	tests := []struct {
		name string
		sec  model.Section
		want []string // substrings of the HTML, in order
	}{
		{"empty section prints its note", model.Section{ID: "dns", Title: "DNS", Empty: "No DNS data."},
			[]string{`<section id="dns">`, `<h2>DNS</h2>`, `<p class="empty">No DNS data.</p>`}},
		{"table with rows left out", model.Section{ID: "t", Title: "T", Blocks: []model.Block{{Table: &model.Table{
			Caption: "Top", Columns: []model.Column{{Title: "Host"}, {Title: "Bytes", Right: true}},
			Rows: [][]string{{"a", "1 KB"}}, More: 1234}}}},
			[]string{`<caption>Top</caption>`, `<th>Host</th><th class="num">Bytes</th>`, `<td>a</td><td class="num">1 KB</td>`, `<p class="more">and 1 234 more</p>`}},
		{"short row is padded to the columns", model.Section{ID: "t", Title: "T", Blocks: []model.Block{{Table: &model.Table{
			Columns: []model.Column{{Title: "A"}, {Title: "B"}}, Rows: [][]string{{"x"}}}}}},
			[]string{`<td>x</td><td></td>`}},
		{"figure tile with note", model.Section{ID: "f", Title: "F", Blocks: []model.Block{{Figures: []model.Figure{{Label: "Total", Value: "1.2 TB", Note: "+3 %"}}}}},
			[]string{`<div class="label">Total</div><div class="value">1.2 TB</div><div class="note">&#43;3 %</div>`}}, // html/template escapes +
		{"list", model.Section{ID: "l", Title: "L", Blocks: []model.Block{{List: []string{"one", "two & three"}}}},
			[]string{`<li>one</li>`, `<li>two &amp; three</li>`}},
		{"hostile section id stays an attribute", model.Section{ID: `x" onclick="alert(1)`, Title: "X", Empty: "none"},
			[]string{`<section id="x&#34; onclick=&#34;alert(1)">`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := testReport()
			r.Sections = []model.Section{tc.sec}
			s := string(renderHTML(t, r))
			at := 0
			for _, w := range tc.want {
				i := strings.Index(s[at:], w)
				if i < 0 {
					t.Fatalf("HTML lacks (after offset %d) %q", at, w)
				}
				at += i + len(w)
			}
		})
	}
}
