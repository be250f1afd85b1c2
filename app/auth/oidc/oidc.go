// Package oidc is the protocol side of SSO through OpenID Connect: the
// authorization code flow with PKCE (S256), state and nonce, and the
// verification of the ID token with coreos/go-oidc. It turns a provider's
// callback into a verified Login carrying the netmon role mapped from the
// user's groups.
//
// It sits under app/auth: app/hub builds the Provider from the `oidc`
// configuration block and hands it to app/api, whose handlers for
// GET /api/auth/oidc/login and GET /api/auth/oidc/callback call Begin and
// Finish, then link the Login to a netmon user by (issuer, subject) only,
// never by e-mail or username, and open the session. Of netmon it imports
// only its parent app/auth, for the one list of roles (app/auth never
// imports it back); the sealing of the login-state cookie comes in as the
// Sealer interface (netmon's vault implements it).
//
// Outbound requests (discovery, token exchange, JWKS) use the *http.Client
// the caller puts in the context with go-oidc's oidc.ClientContext or
// oauth2.HTTPClient, http.DefaultClient otherwise; the hub passes its
// guarded client there so the issuer URL cannot reach private addresses it
// was not allowed to.
//
// The subpackage oidctest is a real OpenID provider on httptest for tests.
package oidc

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"netmon/app/errs"
)

// outboundTimeout bounds discovery and the token exchange, so that a
// provider that accepts a connection and never answers does not hold a
// login request forever.
const outboundTimeout = 15 * time.Second

// Provider runs SSO logins against one OpenID provider. It is safe for
// concurrent use. A Provider made from a Config with an empty Issuer is
// valid and disabled.
type Provider struct {
	log    *slog.Logger
	cfg    Config
	sealer Sealer
	// client makes the calls to the provider (nil: the one in the
	// caller's context, else http.DefaultClient).
	client *http.Client
	// httpsCallback is set when RedirectURL is https: the browser then
	// reaches the callback over TLS even when a proxy terminates it, so the
	// cookie can be Secure although r.TLS is nil.
	httpsCallback bool
	// now is the clock for the state's age and the ID token's expiry;
	// tests move it.
	now func() time.Time

	mu   sync.Mutex
	disc *discovered // nil until a discovery succeeds
}

// discovered is what the provider's discovery document yields.
type discovered struct {
	oauth    *oauth2.Config
	verifier *gooidc.IDTokenVerifier
}

// Deps are the provider's collaborators.
type Deps struct {
	// Sealer seals the login state; it must not be nil when
	// Config.Issuer is set.
	Sealer Sealer
	// HTTPClient makes every call to the provider (discovery, keys, the
	// token exchange): app/hub's goes through the outbound guard. nil:
	// the client of the caller's context (gooidc.ClientContext).
	HTTPClient *http.Client
}

// New returns a Provider for cfg. It does no I/O: the provider's discovery
// document is fetched at the first Begin or Finish, and fetched again on a
// later call while it fails, so a provider that is down when the hub starts
// is not fatal.
func New(log *slog.Logger, cfg Config, deps Deps) *Provider {
	cfg.GroupRoles = maps.Clone(cfg.GroupRoles)
	cfg.Scopes = slices.Clone(cfg.Scopes)
	if cfg.DefaultRole == "" {
		cfg.DefaultRole = "viewer"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	u, err := url.Parse(cfg.RedirectURL)
	return &Provider{
		log:           log,
		cfg:           cfg,
		sealer:        deps.Sealer,
		client:        deps.HTTPClient,
		httpsCallback: err == nil && u.Scheme == "https",
		now:           time.Now,
	}
}

// withClient puts the provider's client in ctx, where go-oidc and oauth2
// take it from.
func (p *Provider) withClient(ctx context.Context) context.Context {
	if p.client == nil {
		return ctx
	}
	return gooidc.ClientContext(ctx, p.client)
}

// Enabled reports whether SSO is configured (Config.Issuer is not empty).
func (p *Provider) Enabled() bool { return p.cfg.Issuer != "" }

// discover returns the cached discovery, fetching it first if needed. Two
// first logins at once may both fetch; the first result stored wins. The
// lock is not held across the fetch, so a hung provider delays only the
// requests that need it.
func (p *Provider) discover(ctx context.Context) (*discovered, error) {
	p.mu.Lock()
	d := p.disc
	p.mu.Unlock()
	if d != nil {
		return d, nil
	}

	ctx, cancel := context.WithTimeout(ctx, outboundTimeout)
	defer cancel()
	// The *http.Client in ctx is kept by go-oidc for the JWKS fetches.
	op, err := gooidc.NewProvider(ctx, p.cfg.Issuer)
	if err != nil {
		return nil, fail(errs.Unavailable, msgDiscovery, err)
	}
	var meta struct {
		ScopesSupported []string `json:"scopes_supported"`
	}
	_ = op.Claims(&meta) // the document decoded once already; only an optional field is read
	groups := slices.Contains(meta.ScopesSupported, "groups")
	d = &discovered{
		oauth: &oauth2.Config{
			ClientID:     p.cfg.ClientID,
			ClientSecret: p.cfg.ClientSecret,
			Endpoint:     op.Endpoint(),
			RedirectURL:  p.cfg.RedirectURL,
			Scopes:       p.cfg.scopes(groups),
		},
		verifier: op.Verifier(&gooidc.Config{ClientID: p.cfg.ClientID, Now: func() time.Time { return p.now() }}),
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.disc == nil {
		p.disc = d
		p.log.Info("oidc provider discovered", "issuer", p.cfg.Issuer, "scopes", d.oauth.Scopes)
	}
	return p.disc, nil
}
