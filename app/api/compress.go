package api

import (
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// compressMinBytes is the smallest answer worth compressing: below it the
// gzip header and a round of CPU cost more than the bytes they save.
const compressMinBytes = 1024

// gzipPool recycles compressors: a gzip.Writer holds about 800 KB of
// tables, too much to allocate per request.
var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed) // a valid level: never fails
	return w
}}

// compressJSON gzip-compresses the JSON (and CSV) answers of /api/ when the
// client accepts gzip: a flow or connection list shrinks five- to tenfold,
// which is what a console on a slow link waits for. The first
// compressMinBytes of a body are held back to decide: a smaller answer,
// another content type (pcap downloads, the docs page), a body that is
// already encoded, a range and a bodiless status go out untouched. The
// console's own files are precompressed at build time (ui/embed.go) and
// the WebSocket is not under /api/, so neither passes through here.
func compressJSON(c *gin.Context) {
	r := c.Request
	if r.Method == http.MethodHead || !strings.HasPrefix(r.URL.Path, "/api/") || !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		c.Next()
		return
	}
	orig := c.Writer
	w := &gzipWriter{ResponseWriter: orig}
	c.Writer = w
	defer func() {
		w.finish()
		c.Writer = orig
	}()
	c.Next()
}

// acceptsGzip reports whether an Accept-Encoding value allows gzip: named
// (or x-gzip) with a q-value above 0, or covered by "*" when not named.
func acceptsGzip(accept string) bool {
	named, star := -1.0, -1.0
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					f = 0 // a malformed weight accepts nothing
				}
				q = f
			}
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "gzip", "x-gzip":
			named = max(named, q)
		case "*":
			star = q
		}
	}
	if named >= 0 {
		return named > 0
	}
	return star > 0
}

// compressibleType reports whether a Content-Type is worth compressing.
func compressibleType(ct string) bool {
	ct, _, _ = strings.Cut(strings.ToLower(ct), ";")
	ct = strings.TrimSpace(ct)
	return ct == "application/json" || strings.HasSuffix(ct, "+json") || ct == "text/csv" || ct == "application/yaml"
}

// gzipWriter holds back the start of a body until it knows whether to
// compress it, then either streams it through gzip or passes it on as is.
type gzipWriter struct {
	gin.ResponseWriter
	status  int    // held-back status (0: none yet)
	buf     []byte // held-back start of the body
	decided bool
	gz      *gzip.Writer
}

func (w *gzipWriter) WriteHeader(code int) {
	if w.decided {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.status = code
}

// WriteHeaderNow is gin's "no body follows" (c.AbortWithStatus, a 204):
// nothing to compress.
func (w *gzipWriter) WriteHeaderNow() {
	if !w.decided {
		w.decide(false)
	}
	w.ResponseWriter.WriteHeaderNow()
}

func (w *gzipWriter) Write(p []byte) (int, error) {
	if !w.decided {
		if !w.eligible() {
			w.decide(false)
		} else {
			w.buf = append(w.buf, p...)
			if len(w.buf) >= compressMinBytes {
				w.decide(true)
			}
			return len(p), nil
		}
	}
	if w.gz != nil {
		return w.gz.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

func (w *gzipWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Written counts held-back bytes as written, so a handler that checks
// before writing an error does not write a second body.
func (w *gzipWriter) Written() bool { return len(w.buf) > 0 || w.ResponseWriter.Written() }

// Status is the held-back status until it is sent.
func (w *gzipWriter) Status() int {
	if !w.decided && w.status != 0 {
		return w.status
	}
	return w.ResponseWriter.Status()
}

// Flush sends what is held back (compressed when it is big enough to be)
// and flushes the compressor: a streaming answer is not delayed.
func (w *gzipWriter) Flush() {
	if !w.decided {
		w.decide(w.eligible() && len(w.buf) >= compressMinBytes)
	}
	if w.gz != nil {
		_ = w.gz.Flush()
	}
	w.ResponseWriter.Flush()
}

// eligible reports whether the answer, as its headers stand, may be compressed.
func (w *gzipWriter) eligible() bool {
	h := w.ResponseWriter.Header()
	switch w.status {
	case http.StatusNoContent, http.StatusPartialContent, http.StatusNotModified:
		return false
	}
	return h.Get("Content-Encoding") == "" && h.Get("Content-Range") == "" && compressibleType(h.Get("Content-Type"))
}

// decide sends the held-back status and body, through gzip when compress.
func (w *gzipWriter) decide(compress bool) {
	w.decided = true
	h := w.ResponseWriter.Header()
	if compressibleType(h.Get("Content-Type")) {
		h.Add("Vary", "Accept-Encoding")
	}
	if compress {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
	}
	if w.status != 0 {
		w.ResponseWriter.WriteHeader(w.status)
	}
	if compress {
		w.gz = gzipPool.Get().(*gzip.Writer)
		w.gz.Reset(w.ResponseWriter)
	}
	if len(w.buf) > 0 {
		if w.gz != nil {
			_, _ = w.gz.Write(w.buf)
		} else {
			_, _ = w.ResponseWriter.Write(w.buf)
		}
	}
	w.buf = nil
}

// finish sends a body shorter than compressMinBytes as it is, or ends the
// gzip stream.
func (w *gzipWriter) finish() {
	if !w.decided {
		w.decide(false)
	}
	if w.gz != nil {
		_ = w.gz.Close()
		w.gz.Reset(io.Discard)
		gzipPool.Put(w.gz)
		w.gz = nil
	}
}
