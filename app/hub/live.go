package hub

import (
	"context"
	"errors"
	"net/http"

	"netmon/app/auth"
)

// liveSessions lets the live feed re-check its clients' credentials every
// tick through the auth service — which reads the session store (shared
// with -session-store=db) and the user's role and enabled flag live.
type liveSessions struct{ auth *auth.Service }

// openKey marks a client that connected while authentication was off.
const openKey = "\x00open"

func (s liveSessions) Key(r *http.Request) string {
	cr, ok := auth.CredentialsOf(r)
	if !ok || cr.Token == "" {
		return openKey
	}
	return cr.Token
}

// Site is the site of the identity app/api's authorize put in the
// request before the upgrade.
func (s liveSessions) Site(r *http.Request) (string, bool) {
	id := auth.FromContext(r.Context())
	if id == nil {
		return "", false
	}
	return id.SiteFilter(), true
}

func (s liveSessions) Valid(ctx context.Context, key string) (string, bool, error) {
	required, err := s.auth.Required(ctx)
	if err != nil {
		return "", false, err
	}
	if key == openKey {
		// Fine while authentication stays off; once a password or the
		// first user turns it on, an anonymous socket ends.
		return "", !required, nil
	}
	id, err := s.auth.Authenticate(ctx, auth.Credentials{Token: key})
	if errors.Is(err, auth.ErrUnauthenticated) {
		// With authentication off, credentials that no longer resolve
		// leave the open identity, of every site (as authorize does).
		return "", !required, nil
	}
	if err != nil {
		return "", false, err
	}
	return id.SiteFilter(), id.Can(auth.PermView, s.auth.MultiSite()), nil
}
