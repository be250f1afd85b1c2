// Package docs is netmon's manual: the numbered markdown files beside this
// file, embedded into the binary. The hub serves them rendered at /docs/
// (handler.go) and `netmon docs [topic]` prints one in a terminal; in the
// repository they read as plain markdown, so the manual has one source.
//
// It is a leaf: the ui package hands /docs/ requests to its Handler.
package docs

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

//go:embed *.md
var pages embed.FS

// Page is one file of the manual.
type Page struct {
	// Slug is the file name without ".md" (07-agents): the page's URL
	// under /docs/ and the name `netmon docs` takes.
	Slug string `json:"slug"`
	// Number orders the pages (the file name's prefix).
	Number int `json:"number"`
	// Title is the text of the page's first heading.
	Title string `json:"title"`
	// Headings are the page's section headings (levels 2 and 3), in
	// order, with the anchor each is reachable at.
	Headings []Heading `json:"headings"`

	source []byte
	html   []byte
	ids    map[string]bool // every heading's anchor, for link checks
}

// Heading is a section heading of a page.
type Heading struct {
	Level int    `json:"level"`
	Text  string `json:"text"`
	ID    string `json:"id"`
}

// Manual is the parsed and rendered manual.
type Manual struct {
	pages  []*Page
	bySlug map[string]*Page
}

// Load parses and renders every embedded page. The manual is a fixed part
// of the binary, so an error here is a build defect, reported by tests.
func Load() (*Manual, error) { return load(pages) }

func load(fsys fs.FS) (*Manual, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(
			parser.WithAutoHeadingID(),
			parser.WithASTTransformers(util.Prioritized(linkRewriter{}, 100)),
		),
		// No raw HTML passes through: the pages are ours, but a page is
		// served under the console's origin and CSP all the same.
		goldmark.WithRendererOptions(html.WithXHTML()),
	)
	m := &Manual{bySlug: map[string]*Page{}}
	for _, name := range names {
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		slug := strings.TrimSuffix(name, ".md")
		num, _, ok := strings.Cut(slug, "-")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("docs: %s: a page's name is NN-topic.md", name)
		}
		p := &Page{Slug: slug, Number: n, Headings: []Heading{}, source: src, ids: map[string]bool{}}
		ctx := parser.NewContext(parser.WithIDs(newSlugger()))
		doc := md.Parser().Parse(text.NewReader(src), parser.WithContext(ctx))
		if err := p.collect(doc, src); err != nil {
			return nil, fmt.Errorf("docs: %s: %w", name, err)
		}
		var buf bytes.Buffer
		if err := md.Renderer().Render(&buf, src, doc); err != nil {
			return nil, fmt.Errorf("docs: render %s: %w", name, err)
		}
		p.html = buf.Bytes()
		m.pages = append(m.pages, p)
		m.bySlug[slug] = p
	}
	sort.Slice(m.pages, func(i, j int) bool { return m.pages[i].Number < m.pages[j].Number })
	return m, nil
}

// collect reads the page's title and section headings from its tree.
func (p *Page) collect(doc ast.Node, src []byte) error {
	return ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		txt := plainText(h, src)
		id, _ := h.AttributeString("id")
		idb, _ := id.([]byte)
		p.ids[string(idb)] = true
		switch {
		case h.Level == 1 && p.Title == "":
			p.Title = txt
		case h.Level == 2 || h.Level == 3:
			p.Headings = append(p.Headings, Heading{Level: h.Level, Text: txt, ID: string(idb)})
		}
		return ast.WalkSkipChildren, nil
	})
}

// plainText is a node's text without markup (code spans keep their text).
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
		case *ast.String:
			b.Write(t.Value)
		case *ast.CodeSpan:
			for cc := t.FirstChild(); cc != nil; cc = cc.NextSibling() {
				if tt, ok := cc.(*ast.Text); ok {
					b.Write(tt.Segment.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// Pages lists the pages in order.
func (m *Manual) Pages() []*Page { return m.pages }

// Page is the page of a slug ("07-agents"), nil if none.
func (m *Manual) Page(slug string) *Page { return m.bySlug[slug] }

// Find resolves what a person types after `netmon docs`: a slug
// ("07-agents"), its number ("7", "07"), its topic ("agents") or a word
// of one title ("alerting"). Several pages matching is an error naming
// them.
func (m *Manual) Find(topic string) (*Page, error) {
	t := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(topic), ".md"))
	if p := m.bySlug[t]; p != nil {
		return p, nil
	}
	if n, err := strconv.Atoi(t); err == nil {
		for _, p := range m.pages {
			if p.Number == n {
				return p, nil
			}
		}
	}
	var hits []*Page
	for _, p := range m.pages {
		_, rest, _ := strings.Cut(p.Slug, "-")
		if rest == t {
			return p, nil
		}
		if t != "" && (strings.Contains(rest, t) || strings.Contains(strings.ToLower(p.Title), t)) {
			hits = append(hits, p)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return nil, fmt.Errorf("no page of the manual matches %q (netmon docs lists them)", topic)
	}
	var names []string
	for _, p := range hits {
		names = append(names, p.Slug)
	}
	return nil, fmt.Errorf("%q matches several pages: %s", topic, strings.Join(names, ", "))
}

// HasAnchor reports whether a heading of the page has the anchor id.
func (p *Page) HasAnchor(id string) bool { return p.ids[id] }

// Markdown is the page's source.
func (p *Page) Markdown() []byte { return p.source }

// HTML is the page's body rendered.
func (p *Page) HTML() []byte { return p.html }

// linkRewriter points links between pages (07-agents.md#agent), which work
// as files in the repository, at the served pages (07-agents#agent).
type linkRewriter struct{}

func (linkRewriter) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		l, ok := n.(*ast.Link)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		dest := string(l.Destination)
		file, frag, _ := strings.Cut(dest, "#")
		if !strings.Contains(file, "/") && strings.HasSuffix(file, ".md") {
			dest = strings.TrimSuffix(file, ".md")
			if frag != "" {
				dest += "#" + frag
			}
			l.Destination = []byte(dest)
		}
		return ast.WalkContinue, nil
	})
}

// slugger names headings the way GitHub does (lower case, letters, digits,
// '-' and '_' kept, spaces become '-', a repeat gets -1, -2, ...), so an
// anchor works the same on a served page and in the repository.
type slugger struct{ seen map[string]int }

func newSlugger() *slugger { return &slugger{seen: map[string]int{}} }

// Slug is the GitHub anchor of a heading's text.
func Slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func (s *slugger) Generate(value []byte, _ ast.NodeKind) []byte {
	base := Slug(string(value))
	id := base
	if n, ok := s.seen[base]; ok {
		id = base + "-" + strconv.Itoa(n)
	}
	s.seen[base]++
	return []byte(id)
}

func (s *slugger) Put(value []byte) { s.seen[string(value)]++ }

// Name is a page's file name in the repository.
func (p *Page) Name() string { return path.Join("ui/docs", p.Slug+".md") }
