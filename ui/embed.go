// Package ui serves the hub's web console: the files the frontend build
// writes to ui/dist, embedded into the binary with go:embed, and the UI
// shell fallback (every unknown non-API path answers index.html, so the
// single-page app's own routes survive a reload).
//
// It is a leaf: app/api calls its handler for GET/HEAD requests outside
// /api. A plain `go build` (no npm) embeds only dist/.keep; then the small
// placeholder page stands in for the console.
package ui

import (
	"bytes"
	"embed"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"netmon/ui/docs"
)

//go:embed all:dist
var dist embed.FS

//go:embed placeholder.html
var placeholder []byte

// CSP is the Content-Security-Policy of every UI response: no inline
// script, nothing from another origin, no framing.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// Config is the UI handler's configuration.
type Config struct {
	// Dev skips the embedded console: the frontend is served by its own
	// development server, and the hub answers UI paths with a 404 that says so.
	Dev bool
}

// Handler serves the embedded console.
type Handler struct {
	cfg Config
	// manual serves /docs/ (the embedded manual), with or without -dev.
	manual http.Handler
	files  fs.FS
	index  []byte
	// modTime is the process start: embedded files carry no time of their own.
	modTime time.Time
}

// New returns the UI handler over the embedded files.
func New(cfg Config) *Handler {
	sub, _ := fs.Sub(dist, "dist") // "dist" is a constant, valid path
	h := newHandler(cfg, sub)
	// The manual is rendered on its first request, not at start: most
	// hubs never serve it, and rendering it costs memory and start time.
	var once sync.Once
	var manual http.Handler
	h.manual = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() {
			m, err := docs.Load()
			if err != nil {
				// The manual is part of the build; ui/docs tests load it,
				// so this only shows a broken build, as a 500 naming it.
				manual = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					http.Error(w, err.Error(), http.StatusInternalServerError)
				})
				return
			}
			manual = docs.NewHandler(m)
		})
		manual.ServeHTTP(w, r)
	})
	return h
}

// newHandler serves the console files of fsys (tests hand in their own).
func newHandler(cfg Config, fsys fs.FS) *Handler {
	h := &Handler{cfg: cfg, files: fsys, modTime: time.Now()}
	if b, err := fs.ReadFile(fsys, "index.html"); err == nil {
		h.index = b
	} else {
		h.index = placeholder
	}
	return h
}

// Embedded reports whether a built console (dist/index.html) is embedded.
func (h *Handler) Embedded() bool { return !bytes.Equal(h.index, placeholder) }

// ServeHTTP serves a file of the console when one matches the path and the
// shell (index.html) otherwise. An unknown path under /assets/ answers 404:
// a browser that asks for a script chunk of an older build must see the
// failure (the console then offers a reload), not the HTML shell parsed as
// JavaScript.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", CSP)
	if h.manual != nil && (r.URL.Path == "/docs" || strings.HasPrefix(r.URL.Path, docs.Prefix)) {
		h.manual.ServeHTTP(w, r)
		return
	}
	if h.cfg.Dev {
		http.Error(w, "netmon -dev: the embedded web UI is off; run the frontend development server", http.StatusNotFound)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name != "" && name != "index.html" && !strings.HasPrefix(path.Base(name), ".") {
		if h.serveFile(w, r, name) {
			return
		}
		if name == "assets" || strings.HasPrefix(name, "assets/") {
			hdr.Set("Cache-Control", "no-store")
			http.Error(w, "no such asset: "+name+" (the console was rebuilt; reload the page)", http.StatusNotFound)
			return
		}
	}
	// The shell must never be cached: it names the current assets.
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(h.index)
	}
}

// serveFile serves the named embedded file, or its precompressed variant
// (name.br, name.gz written by the build) when the request accepts that
// encoding, and reports whether the file exists.
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, name string) bool {
	if isVariant(name) {
		return false // the variants are served only through negotiation
	}
	f, ok := h.open(name)
	if !ok {
		return false
	}
	defer f.Close()
	hdr := w.Header()
	// Vite names built assets by content hash: cache them for good.
	if strings.HasPrefix(name, "assets/") {
		hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	content := f
	if enc, ext := negotiate(r.Header.Get("Accept-Encoding"), func(ext string) bool { return h.exists(name + ext) }); enc != "" {
		hdr.Add("Vary", "Accept-Encoding")
		if vf, ok := h.open(name + ext); ok {
			defer vf.Close()
			// The type is the original's: ServeContent would guess it from
			// the .br/.gz name.
			if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
				hdr.Set("Content-Type", ct)
			}
			hdr.Set("Content-Encoding", enc)
			content = vf
		}
	} else if h.exists(name+".br") || h.exists(name+".gz") {
		hdr.Add("Vary", "Accept-Encoding")
	}
	http.ServeContent(w, r, name, h.modTime, content.(io.ReadSeeker))
	return true
}

// open opens a regular embedded file.
func (h *Handler) open(name string) (fs.File, bool) {
	f, err := h.files.Open(name)
	if err != nil {
		return nil, false
	}
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		f.Close()
		return nil, false
	}
	return f, true
}

func (h *Handler) exists(name string) bool {
	st, err := fs.Stat(h.files, name)
	return err == nil && !st.IsDir()
}

func isVariant(name string) bool {
	return strings.HasSuffix(name, ".br") || strings.HasSuffix(name, ".gz")
}
