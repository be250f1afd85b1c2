package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"netmon/app/errs"
	"netmon/store"
)

// SSOLogin is a verified OpenID Connect login.
type SSOLogin struct {
	Issuer, Subject string
	// Username is the name to give a new user (preferred_username, e-mail
	// or subject); made unique with a suffix when taken.
	Username string
	// Role is mapped from the provider's groups or roles.
	Role string
}

// LoginSSO links a verified SSO login to its user — by (issuer, subject)
// only, never by e-mail or name, so a second account at the provider with
// the same e-mail can never take over the first — creating the user on
// first login and updating its role from the provider's groups on later
// ones. It returns a new session token.
func (s *Service) LoginSSO(ctx context.Context, l SSOLogin, oldToken string) (string, *Identity, error) {
	role := Role(l.Role)
	if !ValidRole(role, s.cfg.MultiSite) {
		return "", nil, errs.Forbiddenf("SSO role %q is not a netmon role in this mode", l.Role)
	}
	sys := &Identity{Username: "oidc:" + l.Issuer, Role: RoleGlobalAdmin, Actor: ActorOIDC}
	u, err := s.db.GetUserByOIDC(ctx, l.Issuer, l.Subject)
	switch {
	case errors.Is(err, store.ErrNotFound):
		u, err = s.createSSOUser(ctx, sys, l)
		if err != nil {
			return "", nil, err
		}
	case err != nil:
		return "", nil, err
	case u.Role != l.Role:
		r := l.Role
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			before, after, err := tx.UpdateUser(ctx, u.ID, store.UserUpdate{Role: &r})
			if err != nil {
				return err
			}
			u = after
			_, err = tx.AppendAudit(ctx, s.event(ctx, actorOf(sys), ActionUserUpdate, userTarget(after), ResultOK, "role from SSO groups", viewOf(before), viewOf(after)))
			return err
		})
		if errors.Is(err, store.ErrLastAdmin) {
			// The provider demoted the last admin: keep the role rather
			// than lock everyone out, and say so in the log.
			s.log.WarnContext(ctx, "SSO role change refused: last admin", "user", u.Username, "role", l.Role)
		} else if err != nil {
			return "", nil, err
		}
	}
	if !u.Enabled {
		return "", nil, errs.Forbiddenf("account %s is disabled", u.Username)
	}
	id := &Identity{Username: u.Username, Role: Role(u.Role), Site: u.Site, Actor: ActorOIDC, UserID: u.ID}
	if oldToken != "" {
		_ = s.RevokeToken(ctx, oldToken)
	}
	tok, err := s.openSession(ctx, id, "sso "+l.Issuer)
	if err != nil {
		return "", nil, err
	}
	return tok, id, nil
}

func (s *Service) createSSOUser(ctx context.Context, sys *Identity, l SSOLogin) (store.User, error) {
	base := sanitizeUsername(l.Username)
	for i := 1; i <= 20; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		u := store.User{Username: name, Role: l.Role, Enabled: true, OIDCIssuer: l.Issuer, OIDCSubject: l.Subject}
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			id, err := tx.CreateUser(ctx, u)
			if err != nil {
				return err
			}
			u.ID = id
			_, err = tx.AppendAudit(ctx, s.event(ctx, actorOf(sys), ActionUserCreate, userTarget(u), ResultOK, "first SSO login", nil, viewOf(u)))
			return err
		})
		if errors.Is(err, store.ErrConflict) {
			// Either the name is taken (try the next suffix) or the same
			// (issuer, subject) was linked concurrently (use it).
			if existing, err := s.db.GetUserByOIDC(ctx, l.Issuer, l.Subject); err == nil {
				return existing, nil
			}
			continue
		}
		return u, err
	}
	return store.User{}, errs.Conflictf("no free username for SSO user %q", base)
}

// sanitizeUsername turns a provider's name into a valid netmon username.
func sanitizeUsername(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '@', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	n := strings.TrimLeft(b.String(), "._@-")
	if len(n) > 58 {
		n = n[:58]
	}
	if n == "" {
		n = "sso-user"
	}
	return n
}
