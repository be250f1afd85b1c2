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

		// Session (spec 4.1).
		{Method: http.MethodPost, Path: "/api/login", OperationID: "login", Tag: "session", Perm: Public,
			Summary:     "Sign in: {password} (legacy bootstrap password) or {username, password}",
			Description: "Sets the nm_session cookie (HttpOnly, SameSite=Lax, Max-Age=604800, Secure over TLS or an https public URL) and returns the same token for bearer use. Wrong credentials: 401. Five failures a minute from one address (or for one username) block it for a minute: 429 with Retry-After: 60.",
			Do:          JSON(s.login),
			Errors:      map[int]string{401: "wrong credentials, or the legacy password while RBAC is enabled", 403: "cross-origin request (CSRF protection)", 429: "too many failures from this address or for this username; Retry-After: 60"}},
		{Method: http.MethodPost, Path: "/api/logout", OperationID: "logout", Tag: "session", Perm: Session,
			Summary: "Sign out: the session (cookie or bearer) ends at once, on every hub sharing it",
			Do:      JSON(s.logout)},
		{Method: http.MethodGet, Path: "/api/auth/status", OperationID: "getAuthStatus", Tag: "session", Perm: Public,
			Summary: "Whether authentication is on and whether this request is signed in (and as whom)",
			Do:      JSON(s.authStatus)},
		{Method: http.MethodGet, Path: "/api/auth/oidc/login", OperationID: "oidcLogin", Tag: "session", Perm: Public,
			Summary: "Start SSO: redirects to the OpenID provider (404 when SSO is not configured)",
			Do: Raw(s.oidcLogin,
				Response{Status: http.StatusFound, ContentType: "text/html", Description: "redirect to the provider"},
				Response{Status: http.StatusNotFound, ContentType: "application/json", Description: "SSO not configured", Body: ErrorBody{}})},
		{Method: http.MethodGet, Path: "/api/auth/oidc/callback", OperationID: "oidcCallback", Tag: "session", Perm: Public,
			Summary:     "SSO redirect target: creates a session and redirects to the console",
			Description: "On failure redirects to /login?sso_error=<reason>. Query parameters are the provider's (code, state, error).",
			Do: Raw(s.oidcCallback,
				Response{Status: http.StatusFound, ContentType: "text/html", Description: "redirect to the console"},
				Response{Status: http.StatusNotFound, ContentType: "application/json", Description: "SSO not configured", Body: ErrorBody{}})},

		// Users, tokens, audit (spec 4.7).
		{Method: http.MethodGet, Path: "/api/v1/users", OperationID: "listUsers", Tag: "admin", Perm: Admin,
			Summary: "List users (a site-bound admin sees its site's)", Do: JSON(s.listUsers)},
		{Method: http.MethodPost, Path: "/api/v1/users", OperationID: "createUser", Tag: "admin", Perm: Admin,
			Summary:     "Create a user",
			Description: "Password at least 8 characters (at most 72 bytes). Roles: admin, netops, analyst, viewer; with -multi-site also site-admin (needs a site) and global-admin. A site-bound creator's site is forced. 409 when the name is taken.",
			Do:          JSON(s.createUser),
			Errors:      map[int]string{409: "the username is taken"}},
		{Method: http.MethodPut, Path: "/api/v1/users/{id}", OperationID: "updateUser", Tag: "admin", Perm: Admin,
			Summary:     "Change a user's role, site, enabled flag or password",
			Description: "Disabling yourself is refused (403); removing the last enabled admin is refused (409). A password change or a disable ends the user's sessions at once.",
			Do:          JSON(s.updateUser),
			Errors:      map[int]string{404: "no such user (or another site's)", 409: "it would remove the last enabled admin"}},
		{Method: http.MethodDelete, Path: "/api/v1/users/{id}", OperationID: "deleteUser", Tag: "admin", Perm: Admin,
			Summary: "Delete a user (not yourself, not the last enabled admin)", Do: JSON(s.deleteUser),
			Errors: map[int]string{404: "no such user (or another site's)", 409: "it is the last enabled admin"}},
		{Method: http.MethodGet, Path: "/api/v1/tokens", OperationID: "listTokens", Tag: "admin", Perm: Admin,
			Summary: "List API tokens: name, role, site, created, last used — never the token", Do: JSON(s.listTokens)},
		{Method: http.MethodPost, Path: "/api/v1/tokens", OperationID: "createToken", Tag: "admin", Perm: Admin,
			Summary: "Create an API token (bnt_…), shown once; only its hash is stored", Do: JSON(s.createToken)},
		{Method: http.MethodDelete, Path: "/api/v1/tokens/{id}", OperationID: "deleteToken", Tag: "admin", Perm: Admin,
			Summary: "Revoke an API token; the bearer stops working at once", Do: JSON(s.deleteToken),
			Errors: map[int]string{404: "no such token (or another site's)"}},
		{Method: http.MethodGet, Path: "/api/v1/audit", OperationID: "listAudit", Tag: "admin", Perm: Admin,
			Summary: "Audit events, newest first, with filters", Do: JSON(s.listAudit)},
		{Method: http.MethodGet, Path: "/api/v1/audit/verify", OperationID: "verifyAudit", Tag: "admin", Perm: Admin,
			Summary:     "Verify the audit hash chain",
			Description: "ok is false when the stored chain was altered; broken_at is the id of the first bad record (0 when ok), checked the number of records examined.",
			Do:          JSON(s.verifyAudit)},
	}
}
