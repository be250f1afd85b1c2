package auth

import (
	"context"

	"netmon/app/errs"
)

// ActorType says how an identity signed in (audit v2 field actor_type).
type ActorType string

// The actor types of spec section 2.10.
const (
	ActorUser   ActorType = "user"   // RBAC user with username and password
	ActorLegacy ActorType = "legacy" // the -auth-password bootstrap, or authentication off
	ActorToken  ActorType = "token"  // API token bearer
	ActorOIDC   ActorType = "oidc"   // SSO user
)

// Identity is who is making a request.
type Identity struct {
	Username string
	Role     Role
	// Site is non-empty for a site-bound identity (spec section 5 item 8).
	Site  string
	Actor ActorType
	// UserID is the RBAC user (0 for legacy and token identities).
	UserID int64
	// TokenID is the API token (token identities only).
	TokenID int64
	// SessionHash is the SHA-256 (hex) of the session token, for logout.
	SessionHash string
	// Open marks the identity given to everyone while authentication is
	// off (no password, no user).
	Open bool
}

// Can reports whether the identity holds permission p.
func (id *Identity) Can(p Permission, multiSite bool) bool {
	return id != nil && Allows(id.Role, p, multiSite)
}

// SiteBound reports whether the identity is limited to one site.
func (id *Identity) SiteBound() bool { return id != nil && id.Site != "" }

// SiteFilter is the site a list query must be limited to: the identity's
// own site when it is site-bound, "" (every site) otherwise. Every list
// handler of a site-scoped resource passes it to its store query.
func (id *Identity) SiteFilter() string {
	if id == nil {
		return ""
	}
	return id.Site
}

// ErrNotVisible is returned by Visible for another site's object; the API
// answers it with 404, exactly as for an object that does not exist, so a
// site-bound caller cannot learn what other sites hold.
var ErrNotVisible = errs.NotFoundf("not found")

// Visible returns ErrNotVisible when an object of site objSite is outside
// the identity's scope. Every detail, update and delete handler of a
// site-scoped resource calls it after loading the object.
func (id *Identity) Visible(objSite string) error {
	if id.SiteBound() && objSite != id.Site {
		return ErrNotVisible
	}
	return nil
}

// PinSite is the site a new object gets: a site-bound identity's own site
// whatever was asked (spec section 5 item 8), else the requested one.
func (id *Identity) PinSite(requested string) string {
	if id.SiteBound() {
		return id.Site
	}
	return requested
}

type identityKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// FromContext returns the identity of the request, or nil.
func FromContext(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}
