package auth

import (
	"context"
	"errors"
	"net/http"
)

// Sockets lets the live feed re-check its clients' credentials every
// tick (live.Sessions): it reads the session store (shared with
// -session-store=db) and the user's role and enabled flag live.
type Sockets struct{ s *Service }

// Sockets is the service as the live feed checks its clients.
func (s *Service) Sockets() Sockets { return Sockets{s} }

// openKey marks a client that connected while authentication was off.
const openKey = "\x00open"

// Key is the credentials of r: its session or API token.
func (Sockets) Key(r *http.Request) string {
	cr, ok := CredentialsOf(r)
	if !ok || cr.Token == "" {
		return openKey
	}
	return cr.Token
}

// Site is the site of the identity app/api's authorize put in the
// request before the upgrade.
func (Sockets) Site(r *http.Request) (string, bool) {
	id := FromContext(r.Context())
	if id == nil {
		return "", false
	}
	return id.SiteFilter(), true
}

// Valid reports whether the credentials of key still grant the feed
// (PermView) and the site they are bound to now.
func (k Sockets) Valid(ctx context.Context, key string) (string, bool, error) {
	required, err := k.s.Required(ctx)
	if err != nil {
		return "", false, err
	}
	if key == openKey {
		// Fine while authentication stays off; once a password or the
		// first user turns it on, an anonymous socket ends.
		return "", !required, nil
	}
	id, err := k.s.Authenticate(ctx, Credentials{Token: key})
	if errors.Is(err, ErrUnauthenticated) {
		// With authentication off, credentials that no longer resolve
		// leave the open identity, of every site (as authorize does).
		return "", !required, nil
	}
	if err != nil {
		return "", false, err
	}
	return id.SiteFilter(), id.Can(PermView, k.s.MultiSite()), nil
}
