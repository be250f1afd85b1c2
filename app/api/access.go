package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"netmon/agentmode/wire"
	"netmon/app/audit"
	"netmon/app/auth"
	"netmon/app/fleet"
	"netmon/app/logging"
)

// authRequiredBody is the exact 401 body of spec section 7.
var authRequiredBody = AuthErrorBody{Error: "oturum gerekli", AuthRequired: true, Message: "session required"}

// permissionOf maps a route's access class to the permission it needs;
// "" for classes that need only an identity (S).
func permissionOf(p Perm) auth.Permission {
	switch p {
	case View:
		return auth.PermView
	case Operate:
		return auth.PermOperate
	case Analyze:
		return auth.PermAnalyze
	case Devices:
		return auth.PermDevices
	case Agents:
		return auth.PermAgents
	case Admin:
		return auth.PermAdmin
	case GlobalAdmin:
		return auth.PermGlobalAdmin
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

// authorize is the one access check, built per route from its Perm:
// identify the caller, answer 401 when authentication is on and there is
// no valid session or bearer, and 403 (audited as denied) when the role
// lacks the route's permission. Handlers never check permissions.
func (s *Server) authorize(r Route) gin.HandlerFunc {
	switch r.Perm {
	case Public:
		return func(c *gin.Context) { c.Next() }
	case Agent:
		// The agent identity: its bearer token or verified client
		// certificate, resolved here for every AG route; handlers read it
		// with agentOf.
		return func(c *gin.Context) {
			a, err := s.agent(c)
			if err != nil {
				s.writeError(c, err)
				return
			}
			c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), agentKey{}, a))
			c.Next()
		}
	case Enroll:
		// The enroll token must be there; the fleet service checks it in
		// the same transaction that takes one of its uses.
		return func(c *gin.Context) {
			if strings.TrimSpace(c.GetHeader(wire.HeaderEnrollToken)) == "" {
				c.AbortWithStatusJSON(http.StatusUnauthorized, ErrorBody{Error: "enrollment needs an enroll token in the " + wire.HeaderEnrollToken + " header"})
				return
			}
			c.Next()
		}
	}
	perm := permissionOf(r.Perm)
	route := r.Method + " " + r.Path
	return func(c *gin.Context) {
		id, err := s.identify(c)
		if err != nil {
			s.writeError(c, err)
			return
		}
		if id == nil {
			c.AbortWithStatusJSON(http.StatusUnauthorized, authRequiredBody)
			return
		}
		if perm != "" && !id.Can(perm, s.multiSite()) {
			s.deps.Auth.Denied(c, id, perm, route)
			c.AbortWithStatusJSON(http.StatusForbidden, ErrorBody{Error: "permission denied: this needs the " + string(perm) + " permission, which the role " + string(id.Role) + " lacks"})
			return
		}
		c.Request = c.Request.WithContext(auth.WithIdentity(c.Request.Context(), id))
		c.Next()
	}
}

// identify returns the caller's identity: from a valid session or bearer,
// the open admin when authentication is off, or nil (401).
func (s *Server) identify(c *gin.Context) (*auth.Identity, error) {
	if s.deps.Auth == nil {
		return openAdmin(), nil
	}
	cr, present := auth.CredentialsOf(c.Request)
	if present {
		id, err := s.deps.Auth.Authenticate(c, cr)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, auth.ErrUnauthenticated) {
			return nil, Errorf(http.StatusServiceUnavailable, "cannot check credentials: the database does not answer")
		}
	}
	required, err := s.deps.Auth.Required(c)
	if err != nil {
		return nil, Errorf(http.StatusServiceUnavailable, "cannot check credentials: the database does not answer")
	}
	if required {
		return nil, nil
	}
	return s.deps.Auth.OpenIdentity(), nil
}

// identity returns the identity authorize put in the request's context.
// Without one — a handler on a route whose class sets none (P, AG, EN) —
// it fails closed: the request ends in a logged 500 (the recoverer), never
// with an admin identity by default.
func identity(c *gin.Context) *auth.Identity {
	if id := auth.FromContext(c.Request.Context()); id != nil {
		return id
	}
	panic("bug: handler of " + c.Request.Method + " " + c.FullPath() + " asked for the caller's identity, but its route sets none")
}

// openAdmin is the identity when no auth service is wired (tests of the
// HTTP plumbing only).
func openAdmin() *auth.Identity {
	return &auth.Identity{Username: "admin", Role: auth.RoleAdmin, Actor: auth.ActorLegacy, Open: true}
}

func (s *Server) multiSite() bool { return s.deps.Auth != nil && s.deps.Auth.MultiSite() }

type agentKey struct{}

// agentOf is the agent authorize resolved for an AG route; like identity
// it fails closed when the route set none.
func agentOf(c *gin.Context) fleet.AgentRef {
	if a, ok := c.Request.Context().Value(agentKey{}).(fleet.AgentRef); ok {
		return a
	}
	panic("bug: handler of " + c.Request.Method + " " + c.FullPath() + " asked for the calling agent, but its route sets none")
}
