package auth

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"netmon/app/errs"
	"netmon/store"
)

// UserView is a user as the API shows it (spec section 2.10): never the
// password hash.
type UserView struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
	Role     string `json:"role"`
	Site     string `json:"site"`
	Enabled  bool   `json:"enabled"`
	// SSO is true for a user linked to an OpenID provider.
	SSO bool `json:"sso"`
}

func viewOf(u store.User) UserView {
	return UserView{ID: u.ID, Username: u.Username, Role: u.Role, Site: u.Site, Enabled: u.Enabled, SSO: u.OIDCSubject != ""}
}

// UserCreate is the body of POST /api/v1/users.
type UserCreate struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Role     string `json:"role"`
	Site     string `json:"site,omitempty"`
}

// UserUpdate is the body of PUT /api/v1/users/{id}; absent fields are kept.
type UserUpdate struct {
	Role     *string `json:"role,omitempty"`
	Site     *string `json:"site,omitempty"`
	Enabled  *bool   `json:"enabled,omitempty"`
	Password *string `json:"password,omitempty"`
}

var usernameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._@-]{0,63}$`)
var siteRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._ -]{0,63}$`)

// NormalizeUsername lower-cases a name and checks its form.
func NormalizeUsername(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if !usernameRE.MatchString(n) {
		return "", invalidField("username", "username must be 1-64 characters of a-z, 0-9, '.', '_', '@' or '-', starting with a letter or digit")
	}
	return n, nil
}

func checkSite(site string) error {
	if site != "" && !siteRE.MatchString(site) {
		return invalidField("site", "site must be 1-64 characters of letters, digits, space, '.', '_' or '-'")
	}
	return nil
}

// checkGrant decides whether actor may give role and site to someone.
func (s *Service) checkGrant(actor *Identity, role Role, site string) error {
	if !ValidRole(role, s.cfg.MultiSite) {
		names := make([]string, 0, 6)
		for _, r := range Roles(s.cfg.MultiSite) {
			names = append(names, string(r))
		}
		return invalidField("role", "role must be one of %s", strings.Join(names, ", "))
	}
	if err := checkSite(site); err != nil {
		return err
	}
	if role == RoleSiteAdmin && site == "" {
		return invalidField("site", "role site-admin needs a site")
	}
	if rank(role) > rank(actor.Role) {
		return errs.Forbiddenf("a %s cannot grant the role %s", actor.Role, role)
	}
	if actor.SiteBound() && site != actor.Site {
		return errs.Forbiddenf("a site-bound identity can only manage its own site (%s)", actor.Site)
	}
	return nil
}

// ListUsers returns the users the actor may see.
func (s *Service) ListUsers(ctx context.Context, actor *Identity) ([]UserView, error) {
	users, err := s.db.ListUsers(ctx, actor.SiteFilter())
	if err != nil {
		return nil, err
	}
	out := make([]UserView, 0, len(users))
	for _, u := range users {
		out = append(out, viewOf(u))
	}
	return out, nil
}

// CreateUser creates a local user; the change and its audit record commit
// together or not at all.
func (s *Service) CreateUser(ctx context.Context, actor *Identity, req UserCreate) (UserView, error) {
	name, err := NormalizeUsername(req.Username)
	if err != nil {
		return UserView{}, err
	}
	site := actor.PinSite(strings.TrimSpace(req.Site))
	if err := s.checkGrant(actor, Role(req.Role), site); err != nil {
		return UserView{}, err
	}
	hash, err := HashPassword(req.Password)
	if err != nil {
		return UserView{}, err
	}
	u := store.User{Username: name, PasswordHash: hash, Role: req.Role, Site: site, Enabled: true}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.CreateUser(ctx, u)
		if err != nil {
			return err
		}
		u.ID = id
		_, err = tx.AppendAudit(ctx, s.event(ctx, actorOf(actor), ActionUserCreate, userTarget(u), ResultOK, "", nil, viewOf(u)))
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return UserView{}, errs.Conflictf("username %q is taken", name)
	}
	if err != nil {
		return UserView{}, err
	}
	return viewOf(u), nil
}

func userTarget(u store.User) string { return fmt.Sprintf("user:%d:%s", u.ID, u.Username) }

// loadVisibleUser returns user id when the actor may see it.
func (s *Service) loadVisibleUser(ctx context.Context, actor *Identity, id int64) (store.User, error) {
	u, err := s.db.GetUser(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.User{}, notFound("user")
	}
	if err != nil {
		return store.User{}, err
	}
	if actor.Visible(u.Site) != nil {
		return store.User{}, notFound("user")
	}
	return u, nil
}

// UpdateUser changes role, site, enabled or password. Disabling yourself
// is refused, the last enabled admin is protected, and a password change
// or a disable ends the user's sessions at once.
func (s *Service) UpdateUser(ctx context.Context, actor *Identity, id int64, req UserUpdate) (UserView, error) {
	cur, err := s.loadVisibleUser(ctx, actor, id)
	if err != nil {
		return UserView{}, err
	}
	if req.Enabled != nil && !*req.Enabled && actor.UserID == id {
		return UserView{}, errs.Forbiddenf("you cannot disable your own account")
	}
	role, site := Role(cur.Role), cur.Site
	if req.Role != nil {
		role = Role(*req.Role)
	}
	if req.Site != nil {
		site = strings.TrimSpace(*req.Site)
	}
	// The actor must be allowed to hold the user both as it is and as it
	// will be: a site-admin can neither pull in nor push out.
	if err := s.checkGrant(actor, Role(cur.Role), cur.Site); err != nil {
		return UserView{}, err
	}
	if err := s.checkGrant(actor, role, site); err != nil {
		return UserView{}, err
	}
	up := store.UserUpdate{Enabled: req.Enabled}
	if req.Role != nil {
		r := string(role)
		up.Role = &r
	}
	if req.Site != nil {
		up.Site = &site
	}
	if req.Password != nil {
		if cur.OIDCSubject != "" && cur.PasswordHash == "" && *req.Password == "" {
			return UserView{}, invalidField("password", "password must not be empty")
		}
		h, err := HashPassword(*req.Password)
		if err != nil {
			return UserView{}, err
		}
		up.PasswordHash = &h
	}
	var after store.User
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		before, a, err := tx.UpdateUser(ctx, id, up)
		if err != nil {
			return err
		}
		after = a
		detail := ""
		if req.Password != nil {
			detail = "password changed"
		}
		bv, av := viewOf(before), viewOf(a)
		_, err = tx.AppendAudit(ctx, s.event(ctx, actorOf(actor), ActionUserUpdate, userTarget(a), ResultOK, detail, bv, av))
		return err
	})
	switch {
	case errors.Is(err, store.ErrLastAdmin):
		return UserView{}, errs.Conflictf("%v", store.ErrLastAdmin)
	case errors.Is(err, store.ErrNotFound):
		return UserView{}, notFound("user")
	case err != nil:
		return UserView{}, err
	}
	if req.Password != nil || !after.Enabled {
		if err := s.sessions.DeleteUser(ctx, id); err != nil {
			s.log.ErrorContext(ctx, "ending sessions failed", "user_id", id, "error", err)
		}
	}
	return viewOf(after), nil
}

// DeleteUser removes a user; deleting yourself or the last enabled admin
// is refused.
func (s *Service) DeleteUser(ctx context.Context, actor *Identity, id int64) error {
	cur, err := s.loadVisibleUser(ctx, actor, id)
	if err != nil {
		return err
	}
	if actor.UserID == id {
		return errs.Forbiddenf("you cannot delete your own account")
	}
	if err := s.checkGrant(actor, Role(cur.Role), cur.Site); err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		u, err := tx.DeleteUser(ctx, id)
		if err != nil {
			return err
		}
		_, err = tx.AppendAudit(ctx, s.event(ctx, actorOf(actor), ActionUserDelete, userTarget(u), ResultOK, "", viewOf(u), nil))
		return err
	})
	switch {
	case errors.Is(err, store.ErrLastAdmin):
		return errs.Conflictf("%v", store.ErrLastAdmin)
	case errors.Is(err, store.ErrNotFound):
		return notFound("user")
	case err != nil:
		return err
	}
	if err := s.sessions.DeleteUser(ctx, id); err != nil {
		s.log.ErrorContext(ctx, "ending sessions failed", "user_id", id, "error", err)
	}
	return nil
}
