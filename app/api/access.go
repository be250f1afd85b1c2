package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"netmon/agentmode/wire"
	"netmon/app/api/router"
	"netmon/app/audit"
	"netmon/app/auth"
	"netmon/app/errs"
	"netmon/app/fleet"
	"netmon/app/logging"
	"netmon/app/secret"
)

// authRequiredBody is the exact 401 body of spec section 7.
var authRequiredBody = AuthErrorBody{Error: "oturum gerekli", AuthRequired: true, Message: "session required"}

// AgentAuthenticator resolves an agent credential (bearer agent token or
// the agent id of a verified client certificate) to the enrolled agent:
// what authorize asks of the fleet service (*fleet.Service) for an
// AgentIdentity route.
type AgentAuthenticator interface {
	Authenticate(ctx context.Context, bearer string, certAgent int64) (fleet.AgentRef, error)
}

// CertAgentID is the agent id of a client certificate verified by the TLS
// handshake (pki.AgentID); identity never comes from a header.
type CertAgentID func(cs *tls.ConnectionState) (int64, bool)

// permissionOf maps a user route's access class to the RBAC permission it
// needs; "" for S, which needs only a signed-in identity.
func permissionOf(p router.Perm) auth.Permission {
	switch p {
	case router.View:
		return auth.PermView
	case router.Operate:
		return auth.PermOperate
	case router.Analyze:
		return auth.PermAnalyze
	case router.Devices:
		return auth.PermDevices
	case router.ManageAgents:
		return auth.PermManageAgents
	case router.Admin:
		return auth.PermAdmin
	case router.Audit:
		return auth.PermAudit
	case router.GlobalAdmin:
		return auth.PermGlobalAdmin
	case router.Scrape:
		return auth.PermAdmin
	}
	return ""
}

// requestInfo puts what the audit chain records of a request (client
// address, request id, user agent) into its context.
func requestInfo(c *gin.Context) {
	r := c.Request
	c.Request = r.WithContext(audit.WithRequest(r.Context(), audit.Request{
		IP:        c.ClientIP(),
		RequestID: logging.RequestID(r.Context()),
		UserAgent: r.UserAgent(),
	}))
	c.Next()
}

// csrf refuses state-changing browser requests from another origin
// (RELIABILITY case 23). It applies to requests without an Authorization
// header — cookie sessions and the login form; bearer clients are not
// exposed to CSRF and pass. The check is Go's http.CrossOriginProtection:
// Sec-Fetch-Site, else Origin against Host, plus -public-url as a trusted
// origin; requests from non-browser clients (neither header) pass.
func (s *Server) csrf(c *gin.Context) {
	if c.Request.Header.Get("Authorization") == "" {
		if err := s.cop.Check(c.Request); err != nil {
			c.AbortWithStatusJSON(http.StatusForbidden, ErrorBody{Error: "cross-origin request refused: state-changing requests must come from the hub's own pages (CSRF protection)"})
			return
		}
	}
	c.Next()
}

// authorize is the one access check, built per route from its Perm, and
// the only code that reads credentials. It puts the caller in the
// request's context, where handlers read it (callerOf, agentOf,
// enrollTokenOf); a handler never checks identity itself.
//
//   - Public: nothing is checked or set.
//   - AgentIdentity: the bearer agent token or verified client certificate
//     must belong to an enrolled agent (401 otherwise).
//   - EnrollToken: the X-Enroll-Token header must be there (401
//     otherwise). The fleet service verifies the token itself in the
//     transaction that takes one of its uses, under the enrollment
//     throttle: checking it here too would be a second, unthrottled
//     oracle for guessing tokens.
//   - Scrape (/metrics): the scrape token as bearer, else as admin below.
//   - Session and the RBAC permissions: a valid session or API token, or
//     the open identity when authentication is off (401 otherwise), whose
//     role has the permission (403, audited as denied, otherwise) and,
//     on a Global route, that is not site-bound (403, audited).
func (s *Server) authorize(r router.Route) gin.HandlerFunc {
	switch r.Perm {
	case router.Public:
		return func(c *gin.Context) { c.Next() }
	case router.AgentIdentity:
		return func(c *gin.Context) {
			a, err := s.authenticateAgent(c)
			if err != nil {
				s.writeError(c, err)
				return
			}
			c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), agentKey{}, a))
			c.Next()
		}
	case router.EnrollToken:
		return func(c *gin.Context) {
			tok := strings.TrimSpace(c.GetHeader(wire.HeaderEnrollToken))
			if tok == "" {
				s.writeError(c, errEnrollTokenMissing)
				return
			}
			c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), enrollKey{}, tok))
			c.Next()
		}
	case router.Scrape:
		user := s.authorizeUser(r)
		return func(c *gin.Context) {
			if s.scrapeToken(c) {
				c.Next()
				return
			}
			user(c)
		}
	}
	return s.authorizeUser(r)
}

// scrapeToken reports whether the request's bearer is the configured
// scrape token (-metrics-token), compared in constant time; never with
// none configured. Any other bearer goes on to the user check: a wrong
// token is a 401 like any unknown credential.
func (s *Server) scrapeToken(c *gin.Context) bool {
	if s.cfg.MetricsToken == "" {
		return false
	}
	h := c.GetHeader("Authorization")
	if len(h) <= 7 || !strings.EqualFold(h[:7], "bearer ") {
		return false
	}
	return secret.Equal(strings.TrimSpace(h[7:]), s.cfg.MetricsToken)
}

// authorizeUser is the access check of a user route (Session and the
// RBAC permissions).
func (s *Server) authorizeUser(r router.Route) gin.HandlerFunc {
	perm := permissionOf(r.Perm)
	var whenPerm auth.Permission
	if r.PermWhen != nil {
		whenPerm = permissionOf(r.PermWhen.Perm)
	}
	route := r.Method + " " + r.Path
	// A route open to any signed-in identity that changes something (the
	// spec's PATCH /api/v1/agents/{id}) refuses a read-only role (the
	// auditor: no change anywhere). Logout ends only the caller's own
	// session, so every role keeps it.
	changes := r.Perm == router.Session && r.Method != http.MethodGet && r.Method != http.MethodHead && r.Path != "/api/logout"
	return func(c *gin.Context) {
		id, err := s.authenticateUser(c)
		if err != nil {
			s.writeError(c, err)
			return
		}
		if id == nil {
			c.AbortWithStatusJSON(http.StatusUnauthorized, authRequiredBody)
			return
		}
		perm := perm
		if w := r.PermWhen; w != nil && c.Query(w.Param) == w.Value {
			perm = whenPerm
		}
		if perm != "" && !id.Can(perm, s.multiSite()) {
			s.deps.Auth.Denied(c.Request.Context(), id, perm, route)
			c.AbortWithStatusJSON(http.StatusForbidden, ErrorBody{Error: "permission denied: this needs the " + string(perm) + " permission, which the role " + string(id.Role) + " lacks"})
			return
		}
		if changes && auth.ReadOnly(id.Role) {
			s.deps.Auth.Denied(c.Request.Context(), id, permChange, route)
			c.AbortWithStatusJSON(http.StatusForbidden, ErrorBody{Error: "permission denied: the role " + string(id.Role) + " is read-only and changes nothing"})
			return
		}
		if r.Global && id.SiteBound() {
			s.deps.Auth.Denied(c.Request.Context(), id, permEverySite, route)
			c.AbortWithStatusJSON(http.StatusForbidden, ErrorBody{Error: errGlobalRoute})
			return
		}
		c.Request = c.Request.WithContext(auth.WithIdentity(c.Request.Context(), id))
		c.Next()
	}
}

// permChange names, in the audit record of a denial, what a read-only
// role lacks on a changing route open to any signed-in identity.
const permChange auth.Permission = "change"

// permEverySite names, in the audit record of a denial, what a site-bound
// identity lacks on a Global route: a scope covering every site.
const permEverySite auth.Permission = "every-site"

// errGlobalRoute is the 403 body of a Global route called by a site-bound
// identity.
const errGlobalRoute = "permission denied: this covers every site, and a site-bound identity sees only its own"

// errEnrollTokenMissing is the 401 of an EnrollToken route without the
// header.
var errEnrollTokenMissing = errs.Unauthorizedf("enrollment needs an enroll token in the %s header", wire.HeaderEnrollToken)

// errNotAgentCert is the 401 of a client certificate the hub CA did not
// issue to an agent.
var errNotAgentCert = errs.Unauthorizedf("client certificate is not a netmon agent certificate")

// errNoCredentialCheck is the 503 of a credential that could not be
// checked because the database does not answer.
var errNoCredentialCheck = errs.Unavailablef(0, "cannot check credentials: the database does not answer")

// authenticateUser resolves the request's session or bearer to a user or
// API token identity: the identity, the open identity when authentication
// is off, or nil (401) when it is on and nothing valid was presented.
//
// The store gets the request's context, not c: gin pools and reuses c, and
// database/sql and the SQLite driver may still read their context after
// the call returned (see router.handlerContext).
func (s *Server) authenticateUser(c *gin.Context) (*auth.Identity, error) {
	cr, present := auth.CredentialsOf(c.Request)
	if present {
		id, err := s.deps.Auth.Authenticate(c.Request.Context(), cr)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, auth.ErrUnauthenticated) {
			return nil, errNoCredentialCheck.Wrap(err)
		}
	}
	required, err := s.deps.Auth.Required(c.Request.Context())
	if err != nil {
		return nil, errNoCredentialCheck.Wrap(err)
	}
	if required {
		return nil, nil
	}
	return s.deps.Auth.OpenIdentity(), nil
}

// authenticateAgent resolves an AgentIdentity route's credential: the
// bearer agent token or the verified client certificate.
func (s *Server) authenticateAgent(c *gin.Context) (fleet.AgentRef, error) {
	bearer := ""
	if h := c.GetHeader("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		bearer = strings.TrimSpace(h[7:])
	}
	var certAgent int64
	if s.deps.CertAgentID != nil && c.Request.TLS != nil {
		if id, ok := s.deps.CertAgentID(c.Request.TLS); ok {
			certAgent = id
		} else if len(c.Request.TLS.PeerCertificates) > 0 {
			return fleet.AgentRef{}, errNotAgentCert
		}
	}
	return s.deps.Fleet.Authenticate(c.Request.Context(), bearer, certAgent)
}

func (s *Server) multiSite() bool { return s.deps.Auth.MultiSite() }

type (
	agentKey  struct{}
	enrollKey struct{}
)

// missingIdentity is the panic of a handler that asks for a kind of
// caller its route's class does not set: a bug in the table, answered
// with a logged 500 by the recoverer, never with a default identity.
type missingIdentity struct{ route, want string }

func (m missingIdentity) String() string {
	return fmt.Sprintf("%s asked for the %s, but its route's permission sets none", m.route, m.want)
}

func failClosed(c *gin.Context, want string) {
	panic(missingIdentity{route: c.Request.Method + " " + c.FullPath(), want: want})
}

// callerOf is the signed-in user, API token or open identity authorize
// put in the context for a Session or RBAC route.
func callerOf(c *gin.Context) *auth.Identity {
	if id := auth.FromContext(c.Request.Context()); id != nil {
		return id
	}
	failClosed(c, "caller's identity")
	return nil
}

// agentOf is the enrolled agent authorize resolved for an AgentIdentity
// route.
func agentOf(c *gin.Context) fleet.AgentRef {
	if a, ok := c.Request.Context().Value(agentKey{}).(fleet.AgentRef); ok {
		return a
	}
	failClosed(c, "calling agent")
	return fleet.AgentRef{}
}

// enrollTokenOf is the enroll token authorize took from the header for an
// EnrollToken route.
func enrollTokenOf(c *gin.Context) string {
	if t, ok := c.Request.Context().Value(enrollKey{}).(string); ok {
		return t
	}
	failClosed(c, "enroll token")
	return ""
}
