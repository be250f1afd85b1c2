package api

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/api/router"
	"netmon/app/logging"
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-Id"

// requestID keeps a well-formed incoming X-Request-Id (so a proxy's id
// follows the request through our logs) and makes one otherwise. A
// malformed one is replaced, never logged: the header is client input.
func (s *Server) requestID(c *gin.Context) {
	id := c.GetHeader(RequestIDHeader)
	if !validRequestID(id) {
		id = newRequestID()
	}
	c.Request = c.Request.WithContext(logging.WithRequestID(c.Request.Context(), id))
	c.Header(RequestIDHeader, id)
	c.Next()
}

// validRequestID accepts 1-128 characters of [A-Za-z0-9._:-].
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		ch := id[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9',
			ch == '.', ch == '_', ch == ':', ch == '-':
		default:
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux (getrandom)
	return hex.EncodeToString(b[:])
}

// httpMetrics are the HTTP server's Prometheus metrics.
type httpMetrics struct {
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "netmon_http_request_duration_seconds",
			Help:    "Duration of HTTP requests, by method, route template (not raw path) and status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route", "status"}),
	}
	if err := reg.Register(m.duration); err != nil {
		return nil, fmt.Errorf("register http metrics: %w", err)
	}
	return m, nil
}

// probeRoutes are polled by orchestrators and scrapers; their successes are
// logged at debug level so they do not drown the log.
var probeRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// observe records the duration histogram and writes the access log line.
// The route label is the table's template, or "other" for anything that
// matched no route (UI paths, 404s), which keeps the label set bounded.
func (s *Server) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	elapsed := time.Since(start)
	route := "other"
	if fp := c.FullPath(); fp != "" {
		if t, ok := s.templates[fp]; ok {
			route = t
		}
	}
	status := c.Writer.Status()
	s.metrics.duration.WithLabelValues(c.Request.Method, route, strconv.Itoa(status)).Observe(elapsed.Seconds())

	level := slog.LevelDebug
	if s.cfg.AccessLog && !(probeRoutes[route] && status < 400) {
		level = slog.LevelInfo
	}
	if !s.log.Enabled(c, level) {
		return
	}
	s.log.LogAttrs(c, level, "http request",
		slog.String("method", c.Request.Method),
		slog.String("route", route),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", status),
		slog.Int("bytes", c.Writer.Size()),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("remote", c.ClientIP()),
	)
}

// recoverer turns a handler panic into a logged 500 instead of a dropped
// connection.
func (s *Server) recoverer(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			if m, ok := v.(missingIdentity); ok {
				// Fail closed (see callerOf): a route whose class
				// sets no identity never runs on a default one.
				s.log.ErrorContext(c, "bug: route without identity", "detail", m.String())
			} else {
				s.log.ErrorContext(c, "handler panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
			if !c.Writer.Written() {
				c.AbortWithStatusJSON(http.StatusInternalServerError, ErrorBody{Error: internalMessage})
			}
		}
	}()
	c.Next()
}

// securityHeaders are sent on every response; the UI handler adds its CSP.
// Over TLS, Strict-Transport-Security tells browsers to use only HTTPS for
// a year; API answers (session tokens, audit records, user lists) are
// never to be kept by a browser or proxy cache.
func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	if c.Request.TLS != nil {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	if p := c.Request.URL.Path; p == "/api" || strings.HasPrefix(p, "/api/") {
		h.Set("Cache-Control", "no-store")
	}
	c.Next()
}

// bodyLimit refuses declared-oversize bodies at once with 413 and caps the
// rest while they are read (decodeBody turns the cap into a 413 too).
func (s *Server) bodyLimit(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > limit {
			s.writeError(c, router.TooLarge(limit))
			return
		}
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		c.Next()
	}
}

// bodyDeadline gives the request body its deadline: the route's
// BodyTimeout, or the guard's default (RELIABILITY case 31: a body sent one
// byte every few seconds must not hold a connection for minutes). It runs
// before routing decides anything else, so a 404 or a 401 with a trickling
// body is cut off too.
func (s *Server) bodyDeadline(c *gin.Context) {
	if s.deps.Guard != nil {
		s.deps.Guard.Body(c.Request, s.bodyTimeouts[c.Request.Method+" "+c.FullPath()])
	}
	c.Next()
}
