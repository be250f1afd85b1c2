package api

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/auth"
	"netmon/app/errs"
)

type loginIn struct {
	Body auth.LoginRequest `body:"json"`
}

// LoginResult is the answer to a successful login; the token is also set
// as the nm_session cookie.
type LoginResult struct {
	OK    bool   `json:"ok"`
	Token string `json:"token" jsonschema:"description=session token (64 hex characters), usable as Authorization: Bearer"`
}

// OKResult is {"ok": true}.
type OKResult struct {
	OK bool `json:"ok"`
}

// AuthStatus is GET /api/auth/status.
type AuthStatus struct {
	// Required is true when authentication is on.
	Required bool `json:"required"`
	// Authenticated is true when the request carries a valid session or bearer.
	Authenticated bool `json:"authenticated"`
	// User is the signed-in identity (absent when not authenticated).
	User *StatusUser `json:"user,omitempty"`
	// SSO is true when OpenID Connect login is configured.
	SSO bool `json:"sso"`
	// MultiSite is true in multi-site mode.
	MultiSite bool `json:"multi_site"`
	// Exposed is true when authentication is off and the hub listens
	// beyond this machine: anyone who can reach it is admin (the console
	// shows a banner).
	Exposed bool `json:"exposed"`
	// RBACUsers is true once a user account exists: the login form then
	// asks for a username (an added field, beside the spec's).
	RBACUsers bool `json:"rbac_users"`
	// BootstrapPassword is true while the legacy bootstrap password signs
	// in (-auth-password is set and no enabled admin user exists); false
	// tells the login form to stop offering it.
	BootstrapPassword bool `json:"bootstrap_password"`
	// Permissions are what the caller's role may use (auth.PermissionsOf
	// in this mode): the admin's while authentication is off, none when
	// not signed in. An added field: the console shows only what they
	// allow, without a copy of the role matrix.
	Permissions []string `json:"permissions" jsonschema_description:"the caller's permissions (values of Permission); the admin's while authentication is off; empty when not signed in"`
	// ReadOnly is true for a role that changes nothing anywhere (the
	// auditor, auth.ReadOnly), not even what any signed-in identity may.
	ReadOnly bool `json:"read_only" jsonschema_description:"the caller's role changes nothing anywhere (the auditor), not even what any signed-in identity may"`
	// Roles are the roles that may be assigned in this mode, most
	// privileged first (auth.Roles).
	Roles []string `json:"roles" jsonschema_description:"the roles that may be assigned in this mode, most privileged first (values of Role)"`
}

// StatusUser is who is signed in.
type StatusUser struct {
	Username string `json:"username"`
	Role     string `json:"role"`
	Site     string `json:"site"`
	// ActorType is user, legacy, token or oidc.
	ActorType string `json:"actor_type"`
}

// secureCookies reports whether cookies get the Secure flag: over TLS, or
// when the public URL is https (TLS ends at a proxy).
func (s *Server) secureCookies(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(s.deps.PublicURL, "https://")
}

func (s *Server) setSessionCookie(c *gin.Context, token string) {
	http.SetCookie(c.Writer, &http.Cookie{
		Name: auth.SessionCookie, Value: token, Path: "/", MaxAge: auth.SessionMaxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secureCookies(c.Request),
	})
}

func (s *Server) clearSessionCookie(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{
		Name: auth.SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secureCookies(c.Request),
	})
}

// oldSessionToken is the session cookie a browser still sends at login.
func oldSessionToken(c *gin.Context) string {
	if ck, err := c.Request.Cookie(auth.SessionCookie); err == nil {
		return ck.Value
	}
	return ""
}

func (s *Server) login(c *gin.Context, in *loginIn) (LoginResult, error) {
	if in.Body.Password == "" {
		return LoginResult{}, invalidField("password", "password is required")
	}
	tok, _, err := s.deps.Auth.Login(c, in.Body, c.ClientIP(), oldSessionToken(c))
	if err != nil {
		return LoginResult{}, err // a 429 gets its Retry-After in writeError
	}
	s.setSessionCookie(c, tok)
	return LoginResult{OK: true, Token: tok}, nil
}

func (s *Server) logout(c *gin.Context, _ *router.NoInput) (OKResult, error) {
	if err := s.deps.Auth.Logout(c, callerOf(c)); err != nil {
		return OKResult{}, err
	}
	s.clearSessionCookie(c)
	return OKResult{OK: true}, nil
}

func (s *Server) authStatus(c *gin.Context, _ *router.NoInput) (AuthStatus, error) {
	st := AuthStatus{SSO: s.deps.SSO != nil && s.deps.SSO.Enabled(), MultiSite: s.multiSite()}
	id, err := s.authenticateUser(c)
	if err != nil {
		return AuthStatus{}, err
	}
	st.Required = id == nil || !id.Open
	st.Exposed = !st.Required && !s.deps.LoopbackOnly
	if st.RBACUsers, st.BootstrapPassword, err = s.deps.Auth.SignIn(c); err != nil {
		return AuthStatus{}, err
	}
	if id != nil && !id.Open {
		st.Authenticated = true
		st.User = &StatusUser{Username: id.Username, Role: string(id.Role), Site: id.Site, ActorType: string(id.Actor)}
	}
	st.Permissions, st.Roles = []string{}, []string{}
	if id != nil {
		for _, p := range auth.PermissionsOf(id.Role, st.MultiSite) {
			st.Permissions = append(st.Permissions, string(p))
		}
		st.ReadOnly = auth.ReadOnly(id.Role)
	}
	for _, r := range auth.Roles(st.MultiSite) {
		st.Roles = append(st.Roles, string(r))
	}
	return st, nil
}

func (s *Server) oidcLogin(c *gin.Context) {
	if s.deps.SSO == nil || !s.deps.SSO.Enabled() {
		c.AbortWithStatusJSON(http.StatusNotFound, ErrorBody{Error: "SSO is not configured on this hub (YAML block oidc)"})
		return
	}
	u, err := s.deps.SSO.Begin(c, c.Writer, c.Request)
	if err != nil {
		s.log.WarnContext(c, "sso login start failed", "error", err)
		c.AbortWithStatusJSON(http.StatusBadGateway, ErrorBody{Error: ssoMessage(err)})
		return
	}
	c.Redirect(http.StatusFound, u)
}

// oidcCallback finishes SSO and sends the browser to the console, with
// the session cookie on success or the reason in ?sso_error= otherwise.
func (s *Server) oidcCallback(c *gin.Context) {
	if s.deps.SSO == nil || !s.deps.SSO.Enabled() {
		c.AbortWithStatusJSON(http.StatusNotFound, ErrorBody{Error: "SSO is not configured on this hub (YAML block oidc)"})
		return
	}
	fail := func(msg string) {
		c.Redirect(http.StatusFound, "/login?sso_error="+url.QueryEscape(msg))
	}
	l, err := s.deps.SSO.Finish(c, c.Writer, c.Request)
	if err != nil {
		s.log.WarnContext(c, "sso login refused", "error", err)
		fail(ssoMessage(err))
		return
	}
	tok, _, err := s.deps.Auth.LoginSSO(c, auth.SSOLogin{Issuer: l.Issuer, Subject: l.Subject, Username: l.Username, Role: l.Role}, oldSessionToken(c))
	if err != nil {
		if errs.KindOf(err) == errs.Internal {
			s.log.ErrorContext(c, "sso session failed", "error", err)
			fail("SSO login failed on the hub; see its log")
			return
		}
		fail(err.Error())
		return
	}
	s.setSessionCookie(c, tok)
	c.Redirect(http.StatusFound, "/")
}

// ssoMessage is what the user is told of a failed SSO step: the
// provider's user-safe message (an errs kind), never its cause.
func ssoMessage(err error) string {
	if e, ok := errs.As(err); ok {
		return e.Msg
	}
	return "SSO provider unavailable"
}
