package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"netmon/app/api/router"
	"netmon/app/version"
)

// Health is the body of /healthz (spec section 4.10).
type Health struct {
	Version         string `json:"version"`
	ProtocolVersion int    `json:"protocol_version"`
}

func (s *Server) healthz(*gin.Context, *router.NoInput) (Health, error) {
	return Health{Version: s.cfg.Version, ProtocolVersion: version.ProtocolVersion}, nil
}

// Readiness is the body of /readyz.
type Readiness struct {
	// Ready is true when every dependency answers.
	Ready bool `json:"ready"`
	// Database is "ok" or "unavailable".
	Database string `json:"database"`
	// Queue is the NATS ingest queue with -nats: "ok" or "unavailable";
	// absent without it.
	Queue string `json:"queue,omitempty"`
	// Error says what is not ready; absent when ready.
	Error string `json:"error,omitempty"`
}

// readyTimeout bounds the database ping of /readyz.
const readyTimeout = 2 * time.Second

func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c, readyTimeout)
	defer cancel()
	if s.deps.DB == nil {
		c.JSON(http.StatusServiceUnavailable, Readiness{Database: "unavailable", Error: "no database configured"})
		return
	}
	if err := s.deps.DB.Ping(ctx); err != nil {
		// The detail (addresses, driver text) goes to the log, not to an
		// unauthenticated caller.
		s.log.WarnContext(c, "readiness check failed", "error", err)
		c.JSON(http.StatusServiceUnavailable, Readiness{Database: "unavailable", Error: "the database does not answer"})
		return
	}
	r := Readiness{Ready: true, Database: "ok"}
	if s.deps.IngestReady != nil {
		r.Queue = "ok"
		if err := s.deps.IngestReady(); err != nil {
			s.log.WarnContext(c, "readiness check failed", "error", err)
			c.JSON(http.StatusServiceUnavailable, Readiness{Database: "ok", Queue: "unavailable", Error: "the NATS server does not answer"})
			return
		}
	}
	c.JSON(http.StatusOK, r)
}

func (s *Server) serveMetrics(c *gin.Context) {
	s.metricsHandler.ServeHTTP(c.Writer, c.Request)
}

func newMetricsHandler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
