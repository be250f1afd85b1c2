package docs

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

var layout = template.Must(template.ParseFS(static, "static/layout.html"))

// Handler serves the manual under /docs/: the index (and search results
// with ?q=), each page rendered inside the manual's layout, each page's
// markdown (/docs/<slug>.md), the search index (/docs/index.json) and the
// layout's stylesheet and script. It needs no console build, so it also
// answers on a hub started with -dev.
type Handler struct {
	m       *Manual
	index   []byte
	modTime time.Time
}

// NewHandler serves m.
func NewHandler(m *Manual) *Handler {
	idx, _ := json.Marshal(m.pages) // plain structs: cannot fail
	return &Handler{m: m, index: idx, modTime: time.Now()}
}

// Prefix is the path the manual is served under.
const Prefix = "/docs/"

type view struct {
	Title   string
	Pages   []*Page
	Current *Page
	Body    template.HTML
	Query   string
	Results []result
	Status  int
}

type result struct {
	Page    *Page
	Heading *Heading
}

// ServeHTTP answers GET and HEAD under /docs/.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Cache-Control", "no-cache")
	name := strings.TrimPrefix(r.URL.Path, "/docs")
	name = strings.TrimPrefix(name, "/")
	switch {
	case name == "":
		q := strings.TrimSpace(r.URL.Query().Get("q"))
		v := view{Title: "netmon manual", Pages: h.m.pages, Query: q}
		if q != "" {
			v.Title = "Search: " + q
			v.Results = h.Search(q)
		}
		h.render(w, r, v)
	case name == "index.json":
		hdr.Set("Content-Type", "application/json")
		http.ServeContent(w, r, name, h.modTime, bytes.NewReader(h.index))
	case name == "docs.css" || name == "docs.js":
		b, _ := static.ReadFile("static/" + name)
		http.ServeContent(w, r, name, h.modTime, bytes.NewReader(b))
	case strings.HasSuffix(name, ".md") && h.m.Page(strings.TrimSuffix(name, ".md")) != nil:
		hdr.Set("Content-Type", "text/markdown; charset=utf-8")
		http.ServeContent(w, r, name, h.modTime, bytes.NewReader(h.m.Page(strings.TrimSuffix(name, ".md")).source))
	case h.m.Page(name) != nil:
		p := h.m.Page(name)
		h.render(w, r, view{Title: p.Title + " — netmon manual", Pages: h.m.pages, Current: p, Body: template.HTML(p.html)}) // #nosec: rendered from the embedded manual, raw HTML dropped
	default:
		h.render(w, r, view{Title: "Not found — netmon manual", Pages: h.m.pages, Status: http.StatusNotFound,
			Body: template.HTML("<h1>No such page</h1><p>The manual has no page <code>" + template.HTMLEscapeString(name) + "</code>; its pages are listed on the left.</p>")})
	}
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, v view) {
	var buf bytes.Buffer
	if err := layout.Execute(&buf, v); err != nil {
		http.Error(w, "render the manual: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// Always a status of its own: the API's fallback route hands UI paths
	// over with gin's 404 preset.
	if v.Status == 0 {
		v.Status = http.StatusOK
	}
	w.WriteHeader(v.Status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// Search finds pages and headings whose text holds every word of q (case
// folded): a page's title first, then its headings in order.
func (h *Handler) Search(q string) []result {
	words := strings.Fields(strings.ToLower(q))
	match := func(s string) bool {
		s = strings.ToLower(s)
		for _, w := range words {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return len(words) > 0
	}
	var out []result
	for _, p := range h.m.pages {
		if match(p.Title) {
			out = append(out, result{Page: p})
		}
		for i := range p.Headings {
			if match(p.Headings[i].Text) {
				out = append(out, result{Page: p, Heading: &p.Headings[i]})
			}
		}
	}
	return out
}
