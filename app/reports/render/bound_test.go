package render

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"netmon/app/reports/model"
)

// TestDeterministic: the same model, and a deep copy of it, give the same
// bytes, so an archived report's SHA-256 can be reproduced.
func TestDeterministic(t *testing.T) {
	for _, tc := range []struct {
		name   string
		render func(*bytes.Buffer, *model.Report) error
	}{
		{"html", func(b *bytes.Buffer, r *model.Report) error { return HTML(b, r) }},
		{"pdf", func(b *bytes.Buffer, r *model.Report) error { return PDF(b, r) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testReport()
			var clone model.Report
			j, _ := json.Marshal(r)
			if err := json.Unmarshal(j, &clone); err != nil {
				t.Fatal(err)
			}
			var first bytes.Buffer
			if err := tc.render(&first, r); err != nil {
				t.Fatal(err)
			}
			for i, m := range []*model.Report{r, &clone, r} {
				var again bytes.Buffer
				if err := tc.render(&again, m); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(first.Bytes(), again.Bytes()) {
					t.Fatalf("render %d differs from the first (%d vs %d bytes)", i+2, again.Len(), first.Len())
				}
			}
		})
	}
}

// hugeTable is the fixture plus a section with a table of n rows.
func hugeTable(n int) *model.Report {
	r := testReport()
	t := &model.Table{Caption: "Conversations", Columns: []model.Column{{Title: "Source"}, {Title: "Destination"}, {Title: "Bytes", Right: true}}}
	for i := range n {
		t.Rows = append(t.Rows, []string{"10.0." + strconv.Itoa(i/256%256) + "." + strconv.Itoa(i%256), "host-" + strconv.Itoa(i) + ".example", strconv.Itoa(n-i) + " KB"})
	}
	r.Sections = append(r.Sections, model.Section{ID: "conversations", Title: "Top conversations", Blocks: []model.Block{{Table: t}}})
	return r
}

// TestPageBound: a 100 000-row table is cut by the row budget: the PDF
// stays within maxPages, the HTML prints the same rows, and both say how
// many rows were left out.
func TestPageBound(t *testing.T) {
	r := hugeTable(100_000)
	// The fixture's other tables (25 + 5 rows) stay whole; the big one
	// gets the rest of the budget.
	kept := maxTableRows - 25 - 5
	more := "and " + groupDigits(100_000-kept) + " more"
	if more != "and 99 030 more" {
		t.Fatalf("expected line is %q; the fixture changed", more)
	}

	path := pdfFile(t, r)
	pages := pdfPages(t, path)
	if pages > maxPages {
		t.Errorf("pages = %d, want <= %d", pages, maxPages)
	}
	raw := pdfText(t, path)
	// Every page the table runs onto starts it with its header again.
	spanned := 0
	for i, pg := range strings.Split(raw, "\f") {
		if strings.Contains(pg, ".example ") {
			spanned++
			if !strings.Contains(flat(pg), "Source Destination Bytes") {
				t.Errorf("page %d has rows but no table header", i+1)
			}
		}
	}
	if spanned < 15 {
		t.Errorf("table spans %d pages; the fixture should make it span more than 15", spanned)
	}
	text := flat(raw)
	if !strings.Contains(text, more) {
		t.Errorf("PDF lacks %q", more)
	}
	last := "host-" + strconv.Itoa(kept-1) + ".example"
	for _, w := range []string{last, "Page " + strconv.Itoa(pages) + " of " + strconv.Itoa(pages)} {
		if !strings.Contains(text, w) {
			t.Errorf("PDF lacks %q", w)
		}
	}
	if cut := "host-" + strconv.Itoa(kept) + ".example"; strings.Contains(text, cut) {
		t.Errorf("PDF has %q, past the budget", cut)
	}

	h := renderHTML(t, r)
	if !bytes.Contains(h, []byte(`<p class="more">`+more+`</p>`)) {
		t.Errorf("HTML lacks %q", more)
	}
	if got := bytes.Count(h, []byte("<tr>")); got != 3+maxTableRows { // 3 header rows
		t.Errorf("HTML has %d rows, want %d", got, 3+maxTableRows)
	}
}

// TestPDFPageBudget: content the row budget does not bound (here 150
// charts) stops at maxPages with a note naming what was left out.
func TestPDFPageBudget(t *testing.T) {
	r := testReport()
	chart := r.Sections[1]
	for i := range 150 {
		s := chart
		s.ID, s.Title = "chart-"+strconv.Itoa(i), "Chart "+strconv.Itoa(i)
		r.Sections = append(r.Sections, s)
	}
	path := pdfFile(t, r)
	if pages := pdfPages(t, path); pages != maxPages {
		t.Errorf("pages = %d, want %d", pages, maxPages)
	}
	text := flat(pdfText(t, path))
	m := regexp.MustCompile(`Report cut at 40 pages: (\d+) sections not fully printed; the HTML report has them\.`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("PDF lacks the cut note")
	}
	// The note counts exactly the sections whose heading did not print.
	printed := len(regexp.MustCompile(`Chart \d+ `).FindAllString(text, -1))
	if left, _ := strconv.Atoi(m[1]); left != 150-printed {
		t.Errorf("cut note says %d sections left out; %d of 150 chart sections printed", left, printed)
	}
	// No orphan heading: the last section printed has its chart.
	titles := regexp.MustCompile(`Chart \d+ `).FindAllStringIndex(text, -1)
	if len(titles) == 0 {
		t.Fatal("no chart section printed")
	}
	if after := text[titles[len(titles)-1][1]:]; !strings.HasPrefix(after, "Traffic per day") {
		t.Errorf("last section heading is not followed by its chart: %.60q", after)
	}
}

func TestRowLimit(t *testing.T) {
	tests := []struct {
		name   string
		sizes  []int
		budget int
		want   int
	}{
		{"all fit", []int{10, 20}, 100, 30},
		{"one big table takes the rest", []int{25, 5, 100000}, 1000, 970},
		{"two big tables share", []int{10, 5000, 5000}, 1000, 495},
		{"many equal tables", []int{300, 300, 300, 300}, 1000, 250},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &model.Report{}
			for _, n := range tc.sizes {
				r.Sections = append(r.Sections, model.Section{Blocks: []model.Block{{Table: &model.Table{Rows: make([][]string, n)}}}})
			}
			if got := rowLimit(r, tc.budget); got != tc.want {
				t.Errorf("rowLimit = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestMoreLineAtLeast(t *testing.T) {
	for _, c := range []struct {
		n       int
		atLeast bool
		want    string
	}{
		{1234, false, "and 1 234 more"},
		{1234, true, "and at least 1 234 more"},
		{0, true, "and more, not counted"},
		{0, false, ""},
	} {
		if got := moreLineAtLeast(c.n, c.atLeast); got != c.want {
			t.Errorf("moreLineAtLeast(%d, %v) = %q, want %q", c.n, c.atLeast, got, c.want)
		}
	}
}

// TestAtLeastInBothRenderings: a table whose count is a lower bound says
// "at least" in the HTML and in the PDF.
func TestAtLeastInBothRenderings(t *testing.T) {
	r := &model.Report{Type: model.TypeTraffic, Title: "Traffic report", Days: 1, Timezone: "UTC",
		Sections: []model.Section{{ID: "destinations", Title: "Destinations", Blocks: []model.Block{{Table: &model.Table{
			Columns: []model.Column{{Title: "Address"}}, Rows: [][]string{{"192.0.2.1"}}, More: 29999, MoreAtLeast: true}}}}}}
	var h bytes.Buffer
	if err := HTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "and at least 29 999 more") {
		t.Error("the HTML lacks the lower bound")
	}
	if text := flat(pdfText(t, pdfFile(t, r))); !strings.Contains(text, "and at least 29 999 more") {
		t.Errorf("the PDF lacks the lower bound: %q", text)
	}
}

func TestMoreLine(t *testing.T) {
	for n, want := range map[int]string{0: "", -1: "", 7: "and 7 more", 999: "and 999 more", 1000: "and 1 000 more", 1234567: "and 1 234 567 more"} {
		if got := moreLine(n); got != want {
			t.Errorf("moreLine(%d) = %q, want %q", n, got, want)
		}
	}
}
