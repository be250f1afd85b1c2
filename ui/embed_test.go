package ui

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func TestNegotiate(t *testing.T) {
	both := func(string) bool { return true }
	gzOnly := func(ext string) bool { return ext == ".gz" }
	none := func(string) bool { return false }
	for _, tc := range []struct {
		desc, accept string
		has          func(string) bool
		want         string
	}{
		{"no header: identity", "", both, ""},
		{"browser default prefers brotli", "gzip, deflate, br, zstd", both, "br"},
		{"gzip only accepted", "gzip", both, "gzip"},
		{"x-gzip is gzip", "x-gzip", both, "gzip"},
		{"brotli refused with q=0", "br;q=0, gzip", both, "gzip"},
		{"higher q wins over brotli's tie-break", "br;q=0.5, gzip;q=0.8", both, "gzip"},
		{"tie goes to brotli", "gzip;q=0.7, br;q=0.7", both, "br"},
		{"star accepts what is not named", "*", both, "br"},
		{"star with brotli refused", "*, br;q=0", both, "gzip"},
		{"identity only", "identity", both, ""},
		{"everything refused", "*;q=0", both, ""},
		{"malformed weight accepts nothing", "br;q=abc, gzip;q=2", both, ""},
		{"case and spaces", "  GZIP ; Q=1 ", both, "gzip"},
		{"variant missing: next best", "br, gzip", gzOnly, "gzip"},
		{"no variants at all", "br, gzip", none, ""},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			if got, _ := negotiate(tc.accept, tc.has); got != tc.want {
				t.Errorf("negotiate(%q) = %q, want %q", tc.accept, got, tc.want)
			}
		})
	}
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestServeCompressedAssets(t *testing.T) {
	js := bytes.Repeat([]byte("console.log('netmon');\n"), 200)
	files := fstest.MapFS{
		"index.html":         {Data: []byte("<!doctype html><title>netmon</title>")},
		"assets/app-1.js":    {Data: js},
		"assets/app-1.js.gz": {Data: gz(t, js)},
		"assets/app-1.js.br": {Data: []byte("brotli-bytes")},
		"assets/plain-2.css": {Data: []byte("body{}")},
		"favicon.svg":        {Data: []byte("<svg/>")},
	}
	h := newHandler(Config{}, files)
	get := func(path, accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		if accept != "" {
			r.Header.Set("Accept-Encoding", accept)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}

	t.Run("brotli when accepted", func(t *testing.T) {
		w := get("/assets/app-1.js", "gzip, deflate, br")
		if w.Code != 200 || w.Header().Get("Content-Encoding") != "br" || w.Body.String() != "brotli-bytes" {
			t.Fatalf("got %d %q %q", w.Code, w.Header().Get("Content-Encoding"), w.Body.String())
		}
		if ct := w.Header().Get("Content-Type"); ct != "text/javascript; charset=utf-8" {
			t.Errorf("Content-Type = %q, want the script's type", ct)
		}
		if w.Header().Get("Vary") != "Accept-Encoding" || w.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("headers %v", w.Header())
		}
	})
	t.Run("gzip decodes to the original", func(t *testing.T) {
		w := get("/assets/app-1.js", "gzip")
		if w.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("Content-Encoding = %q", w.Header().Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(w.Body)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(zr)
		if !bytes.Equal(got, js) {
			t.Errorf("decoded %d bytes, want the %d of the original", len(got), len(js))
		}
	})
	t.Run("identity without Accept-Encoding", func(t *testing.T) {
		w := get("/assets/app-1.js", "")
		if w.Header().Get("Content-Encoding") != "" || !bytes.Equal(w.Body.Bytes(), js) || w.Header().Get("Vary") != "Accept-Encoding" {
			t.Fatalf("got encoding %q, %d bytes, Vary %q", w.Header().Get("Content-Encoding"), w.Body.Len(), w.Header().Get("Vary"))
		}
	})
	t.Run("file without variants has no Vary", func(t *testing.T) {
		w := get("/assets/plain-2.css", "br")
		if w.Code != 200 || w.Header().Get("Content-Encoding") != "" || w.Header().Get("Vary") != "" || w.Body.String() != "body{}" {
			t.Fatalf("got %d %v %q", w.Code, w.Header(), w.Body.String())
		}
	})
	for _, p := range []string{"/assets/app-0.js", "/assets/app-1.js.br", "/assets/"} {
		t.Run("unknown asset is 404: "+p, func(t *testing.T) {
			w := get(p, "br")
			if w.Code != http.StatusNotFound || w.Header().Get("Cache-Control") != "no-store" {
				t.Fatalf("GET %s = %d (Cache-Control %q), want 404 no-store", p, w.Code, w.Header().Get("Cache-Control"))
			}
		})
	}
	t.Run("console routes get the shell", func(t *testing.T) {
		w := get("/flows/conversations", "br")
		if w.Code != 200 || w.Header().Get("Cache-Control") != "no-cache" || w.Body.String() != "<!doctype html><title>netmon</title>" {
			t.Fatalf("got %d %q", w.Code, w.Body.String())
		}
	})
}

// TestManualServedWithAndWithoutDev: /docs/ is the embedded manual, also on
// a hub started with -dev (whose console comes from Vite's server), under
// the console's Content-Security-Policy; other paths keep their answers.
func TestManualServedWithAndWithoutDev(t *testing.T) {
	for _, dev := range []bool{false, true} {
		h := New(Config{Dev: dev})
		for _, tt := range []struct {
			path string
			code int
			body string
		}{
			{"/docs/", 200, `<a href="/docs/15-troubleshooting">Troubleshooting</a>`},
			{"/docs", 200, `<a href="/docs/01-install">Install and upgrade</a>`},
			{"/docs/02-quick-start", 200, `<title>Quick start — netmon manual</title>`},
		} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.body) {
				t.Errorf("dev=%v GET %s = %d, body lacks %q", dev, tt.path, rec.Code, tt.body)
			}
			if rec.Header().Get("Content-Security-Policy") != CSP {
				t.Errorf("dev=%v GET %s: CSP %q", dev, tt.path, rec.Header().Get("Content-Security-Policy"))
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docsearch", nil))
		if dev && rec.Code != http.StatusNotFound {
			t.Errorf("dev GET /docsearch = %d, want the -dev 404 (not the manual)", rec.Code)
		}
	}
}
