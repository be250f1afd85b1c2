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
	"net/http"
	"path"
	"strings"
	"time"
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
	cfg   Config
	files fs.FS
	index []byte
	// modTime is the process start: embedded files carry no time of their own.
	modTime time.Time
}

// New returns the UI handler over the embedded files.
func New(cfg Config) *Handler {
	sub, _ := fs.Sub(dist, "dist") // "dist" is a constant, valid path
	h := &Handler{cfg: cfg, files: sub, modTime: time.Now()}
	if b, err := fs.ReadFile(sub, "index.html"); err == nil {
		h.index = b
	} else {
		h.index = placeholder
	}
	return h
}

// Embedded reports whether a built console (dist/index.html) is embedded.
func (h *Handler) Embedded() bool { return !bytes.Equal(h.index, placeholder) }

// ServeHTTP serves a file of the console when one matches the path and the
// shell (index.html) otherwise.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", CSP)
	if h.cfg.Dev {
		http.Error(w, "netmon -dev: the embedded web UI is off; run the frontend development server", http.StatusNotFound)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name != "" && name != "index.html" && !strings.HasPrefix(path.Base(name), ".") {
		if f, err := h.files.Open(name); err == nil {
			st, err := f.Stat()
			if err == nil && !st.IsDir() {
				defer f.Close()
				// Vite names built assets by content hash: cache them for good.
				if strings.HasPrefix(name, "assets/") {
					hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
				}
				http.ServeContent(w, r, name, h.modTime, f.(io.ReadSeeker))
				return
			}
			f.Close()
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
