package docs

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func manual(t *testing.T) *Manual {
	t.Helper()
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPagesAreWhole: every page has a title, numbers are unique, and every
// link between pages (or within one) names a page and a heading that
// exist, so the manual has no dead link in the repository or when served.
func TestPagesAreWhole(t *testing.T) {
	m := manual(t)
	if len(m.Pages()) < 15 {
		t.Fatalf("%d pages, want the manual's 15 or more", len(m.Pages()))
	}
	seen := map[int]string{}
	link := regexp.MustCompile(`\]\(([^)\s]*)\)`)
	for _, p := range m.Pages() {
		if p.Title == "" {
			t.Errorf("%s: no # title", p.Slug)
		}
		if prev, ok := seen[p.Number]; ok {
			t.Errorf("%s and %s share the number %d", prev, p.Slug, p.Number)
		}
		seen[p.Number] = p.Slug
		for _, mm := range link.FindAllStringSubmatch(string(p.Markdown()), -1) {
			dest := mm[1]
			if strings.Contains(dest, "://") || strings.HasPrefix(dest, "/") || strings.HasPrefix(dest, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(dest, "#")
			target := p
			if file != "" {
				if target = m.Page(strings.TrimSuffix(file, ".md")); target == nil || !strings.HasSuffix(file, ".md") {
					t.Errorf("%s: link %q names no page of the manual", p.Slug, dest)
					continue
				}
			}
			if frag != "" && !target.HasAnchor(frag) {
				t.Errorf("%s: link %q: %s has no heading with that anchor", p.Slug, dest, target.Slug)
			}
		}
	}
}

func TestFind(t *testing.T) {
	m := manual(t)
	for _, tt := range []struct{ topic, want, err string }{
		{"07-agents", "07-agents", ""},
		{"07-agents.md", "07-agents", ""},
		{"7", "07-agents", ""},
		{"agents", "07-agents", ""},
		{"Alerting", "09-alerting", ""},
		{"nosuchtopic", "", `no page of the manual matches "nosuchtopic"`},
		{"s", "", "matches several pages"},
	} {
		p, err := m.Find(tt.topic)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Find(%q) = %v, want error containing %q", tt.topic, err, tt.err)
			}
		case err != nil:
			t.Errorf("Find(%q): %v", tt.topic, err)
		case p.Slug != tt.want:
			t.Errorf("Find(%q) = %s, want %s", tt.topic, p.Slug, tt.want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Capture, recording, history, GeoIP": "capture-recording-history-geoip",
		"Agent fleet (hub side)":             "agent-fleet-hub-side",
		"The record encoding, byte for byte": "the-record-encoding-byte-for-byte",
		"`netmon_panics_total` and 2.5":      "netmon_panics_total-and-25",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func get(t *testing.T, h http.Handler, path string) (int, string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, rec.Header().Get("Content-Type"), string(b)
}

func TestHandler(t *testing.T) {
	m := manual(t)
	h := NewHandler(m)
	for _, tt := range []struct {
		path, ctype string
		code        int
		contains    []string
	}{
		{"/docs/", "text/html; charset=utf-8", 200, []string{`<a href="/docs/07-agents">Agents and deep collection</a>`, `<a href="/docs/09-alerting">Alerting and delivery</a>`}},
		{"/docs/07-agents", "text/html; charset=utf-8", 200, []string{`<title>Agents and deep collection — netmon manual</title>`, `<li class="current">`, `id="agent-fleet-hub-side"`, `<a href="#agent-fleet-hub-side">Agent fleet (hub side)</a>`}},
		{"/docs/07-agents.md", "text/markdown; charset=utf-8", 200, []string{"# Agents and deep collection\n"}},
		{"/docs/?q=slow+clients", "text/html; charset=utf-8", 200, []string{`<a href="/docs/11-security#slow-and-silent-clients">Slow and silent clients</a> <span class="in">in Security model</span>`}},
		{"/docs/?q=zzzz", "text/html; charset=utf-8", 200, []string{`No title or heading holds every word of “zzzz”`}},
		{"/docs/nope", "text/html; charset=utf-8", 404, []string{"The manual has no page <code>nope</code>"}},
		{"/docs/%3Cscript%3E", "text/html; charset=utf-8", 404, []string{"<code>&lt;script&gt;</code>"}},
		{"/docs/docs.js", "text/javascript; charset=utf-8", 200, []string{"netmon.theme"}},
		{"/docs/docs.css", "text/css; charset=utf-8", 200, []string{"prefers-color-scheme: dark"}},
	} {
		code, ctype, body := get(t, h, tt.path)
		if code != tt.code || ctype != tt.ctype {
			t.Errorf("GET %s = %d %q, want %d %q", tt.path, code, ctype, tt.code, tt.ctype)
		}
		for _, c := range tt.contains {
			if !strings.Contains(body, c) {
				t.Errorf("GET %s: body lacks %q", tt.path, c)
			}
		}
	}
	// Links between pages point at served pages, not at .md files.
	_, _, body := get(t, h, "/docs/16-maintainers")
	if strings.Contains(body, `.md#`) && !strings.Contains(body, `href="/docs/16-maintainers.md"`) {
		t.Errorf("a link still names a .md file: %s", regexp.MustCompile(`href="[^"]*\.md#[^"]*"`).FindString(body))
	}
	_, _, idx := get(t, h, "/docs/index.json")
	var pages []Page
	if err := json.Unmarshal([]byte(idx), &pages); err != nil || len(pages) != len(m.Pages()) {
		t.Fatalf("index.json: %d pages, err %v; want %d", len(pages), err, len(m.Pages()))
	}
	if pages[0].Slug != m.Pages()[0].Slug || len(pages[0].Headings) == 0 {
		t.Errorf("index.json first page = %+v", pages[0])
	}
}
