package api

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		accept string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"gzip, deflate, br, zstd", true},
		{"br", false},
		{"x-gzip", true},
		{"GZIP;q=0.5", true},
		{"gzip;q=0", false},
		{"gzip;q=0.0, br", false},
		{"*", true},
		{"*;q=0", false},
		{"*, gzip;q=0", false},
		{"gzip;q=0, *", false},
		{"br, *;q=0.1", true},
		{"gzip;q=bogus", false},
		{"identity", false},
	} {
		if got := acceptsGzip(tc.accept); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.accept, got, tc.want)
		}
	}
}

// compressEngine is a bare engine with only the middleware and handlers
// for each kind of answer it must and must not compress.
func compressEngine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.Use(compressJSON)
	big := strings.Repeat(`{"ip":"192.0.2.1","bytes":12345},`, 200)
	bigJSON := func(c *gin.Context) { c.Data(http.StatusOK, "application/json; charset=utf-8", []byte("["+big+"{}]")) }
	e.GET("/api/big", bigJSON)
	e.HEAD("/api/big", bigJSON)
	e.GET("/api/small", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"ok": true}) })
	e.GET("/api/error", func(c *gin.Context) {
		c.Data(http.StatusNotFound, "application/json", []byte(`{"error":"`+strings.Repeat("x", 2000)+`"}`))
	})
	e.GET("/api/csv", func(c *gin.Context) { c.Data(http.StatusOK, "text/csv", []byte(strings.Repeat("a,b,c\n", 500))) })
	e.GET("/api/pcap", func(c *gin.Context) {
		c.Data(http.StatusOK, "application/vnd.tcpdump.pcap", bytes.Repeat([]byte{0xd4, 0xc3, 0xb2, 0xa1}, 1000))
	})
	e.GET("/api/encoded", func(c *gin.Context) {
		c.Header("Content-Encoding", "identity")
		c.Data(http.StatusOK, "application/json", []byte("["+big+"{}]"))
	})
	e.GET("/api/empty", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	e.GET("/api/abort", func(c *gin.Context) { c.AbortWithStatus(http.StatusForbidden) })
	e.GET("/api/stream", func(c *gin.Context) {
		c.Header("Content-Type", "application/json")
		c.Status(http.StatusOK)
		_, _ = c.Writer.Write([]byte(`{"first":1}`))
		c.Writer.Flush()
		_, _ = c.Writer.Write([]byte(strings.Repeat(" ", 3000)))
	})
	e.GET("/page", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", []byte("["+big+"{}]")) })
	return e
}

func TestCompressJSON(t *testing.T) {
	e := compressEngine()
	for _, tc := range []struct {
		name, path, accept string
		method             string
		wantEncoding       string
		wantStatus         int
	}{
		{"big JSON, gzip accepted", "/api/big", "gzip, deflate, br", "", "gzip", 200},
		{"big JSON, gzip refused", "/api/big", "gzip;q=0, br", "", "", 200},
		{"big JSON, no Accept-Encoding", "/api/big", "", "", "", 200},
		{"small JSON stays plain", "/api/small", "gzip", "", "", 200},
		{"error bodies are compressed too", "/api/error", "gzip", "", "gzip", 404},
		{"CSV export", "/api/csv", "gzip", "", "gzip", 200},
		{"pcap download is left alone", "/api/pcap", "gzip", "", "", 200},
		{"an encoding already chosen is kept", "/api/encoded", "gzip", "", "identity", 200},
		{"204 has no body", "/api/empty", "gzip", "", "", 204},
		{"abort with a status", "/api/abort", "gzip", "", "", 403},
		{"a flush before the threshold sends plain", "/api/stream", "gzip", "", "", 200},
		{"HEAD is not compressed", "/api/big", "gzip", http.MethodHead, "", 200},
		{"outside /api/ (the console's files) untouched", "/page", "gzip", "", "", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			plainReq := httptest.NewRequest(method, tc.path, nil)
			plain := httptest.NewRecorder()
			e.ServeHTTP(plain, plainReq)

			req := httptest.NewRequest(method, tc.path, nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			w := httptest.NewRecorder()
			e.ServeHTTP(w, req)
			if w.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d", w.Code, tc.wantStatus)
			}
			if got := w.Header().Get("Content-Encoding"); got != tc.wantEncoding {
				t.Fatalf("Content-Encoding %q, want %q", got, tc.wantEncoding)
			}
			body := w.Body.Bytes()
			if tc.wantEncoding == "gzip" {
				if !strings.Contains(w.Header().Get("Vary"), "Accept-Encoding") {
					t.Errorf("Vary %q lacks Accept-Encoding", w.Header().Get("Vary"))
				}
				if w.Header().Get("Content-Length") != "" {
					t.Errorf("Content-Length %q on a compressed body", w.Header().Get("Content-Length"))
				}
				if len(body) >= plain.Body.Len() {
					t.Errorf("compressed %d bytes, plain %d", len(body), plain.Body.Len())
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(body, plain.Body.Bytes()) {
				t.Errorf("body differs from the plain answer (%d vs %d bytes)", len(body), plain.Body.Len())
			}
		})
	}
}

// The middleware is registered on the real engine: the OpenAPI document
// (about 100 KB of JSON) goes out gzip-compressed.
func TestServerCompressesJSON(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, nil)
	plain := do(t, s.Handler(), request{method: http.MethodGet, url: "/api/openapi.json"})
	w := do(t, s.Handler(), request{method: http.MethodGet, url: "/api/openapi.json", header: map[string]string{"Accept-Encoding": "gzip"}})
	if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, Content-Encoding %q: want 200 gzip", w.Code, w.Header().Get("Content-Encoding"))
	}
	t.Logf("openapi.json: %d bytes plain, %d gzip", plain.Body.Len(), w.Body.Len())
	zr, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain.Body.Bytes()) {
		t.Fatalf("decompressed document differs from the plain one (%d vs %d bytes)", len(got), plain.Body.Len())
	}
}
