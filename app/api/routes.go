package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// routeTable is THE route table: every endpoint of the hub, declared once.
// buildEngine registers exactly these handlers and renderDocument describes
// exactly these operations; the drift test holds the two together.
// Every route is registered in every configuration: a feature that is off
// answers its "disabled" body instead of disappearing.
func (s *Server) routeTable() []Route {
	return []Route{
		// System: probes, metrics and the API description.
		{Method: http.MethodGet, Path: "/healthz", OperationID: "getHealthz", Tag: "system", Perm: Public,
			Summary:     "Liveness: the hub's version and agent protocol version",
			Description: "Public so that orchestrators and agents can probe it; it reveals nothing but the version.",
			Do:          JSON(s.healthz)},
		{Method: http.MethodGet, Path: "/readyz", OperationID: "getReadyz", Tag: "system", Perm: Public,
			Summary:     "Readiness: 200 when the database answers, 503 otherwise",
			Description: "The database is pinged with a 2 s deadline on every call.",
			Do: Raw(s.readyz,
				Response{Status: http.StatusOK, ContentType: "application/json", Description: "ready", Body: Readiness{}},
				Response{Status: http.StatusServiceUnavailable, ContentType: "application/json", Description: "the database does not answer", Body: Readiness{}})},
		{Method: http.MethodGet, Path: "/metrics", OperationID: "getMetrics", Tag: "system", Perm: Session,
			Summary:     "Prometheus metrics (text exposition format)",
			Description: "Go runtime, process, HTTP request durations by route template and status, database pools and maintenance. With authentication on, scrape with an API token as bearer.",
			Do: Raw(s.serveMetrics,
				Response{Status: http.StatusOK, ContentType: "text/plain", Description: "Prometheus text format 0.0.4"})},
		{Method: http.MethodGet, Path: "/api/openapi.json", OperationID: "getOpenAPIJSON", Tag: "system", Perm: Public,
			Summary: "This OpenAPI 3.1 document as JSON",
			Do: Raw(func(c *gin.Context) { c.Data(http.StatusOK, "application/json", s.doc.json) },
				Response{Status: http.StatusOK, ContentType: "application/json", Description: "the OpenAPI document"})},
		{Method: http.MethodGet, Path: "/api/openapi.yaml", OperationID: "getOpenAPIYAML", Tag: "system", Perm: Public,
			Summary: "This OpenAPI 3.1 document as YAML (same content as the JSON)",
			Do: Raw(func(c *gin.Context) { c.Data(http.StatusOK, "application/yaml", s.doc.yaml) },
				Response{Status: http.StatusOK, ContentType: "application/yaml", Description: "the OpenAPI document"})},
		{Method: http.MethodGet, Path: "/api/docs", OperationID: "getDocs", Tag: "system", Perm: Public,
			Summary: "Browsable list of every endpoint, one self-contained HTML page",
			Do: Raw(s.serveDocs,
				Response{Status: http.StatusOK, ContentType: "text/html", Description: "the endpoint list"})},
	}
}
