package oidc

import (
	"errors"
	"fmt"
	"net/url"
	"slices"

	"netmon/app/auth"
)

// Config configures SSO through an OpenID Connect provider. It is the `oidc`
// block of the hub configuration plus what the hub derives from it.
type Config struct {
	// Issuer is the OpenID provider's issuer URL, exactly as the provider's
	// discovery document spells it (a trailing slash matters). Empty turns
	// SSO off.
	Issuer string
	// ClientID is the client (application) id registered at the provider; it
	// is also the audience the ID token must carry.
	ClientID string
	// ClientSecret authenticates the hub at the token endpoint. It is never
	// logged, returned nor put in an error.
	ClientSecret string
	// RedirectURL is the full callback URL registered at the provider. The
	// caller defaults it to <public-url>/api/auth/oidc/callback.
	RedirectURL string
	// GroupRoles maps a group (a value of the `groups` claim, or of the
	// `roles` claim when there is no `groups` claim) to a netmon role. Names
	// match exactly, case included.
	GroupRoles map[string]string
	// DefaultRole is the role of a user none of whose groups is mapped;
	// "viewer" when empty.
	DefaultRole string
	// Scopes are the scopes requested. Empty means openid, profile, email,
	// and groups when the provider's discovery document lists it in
	// scopes_supported (asking for an unknown scope makes some providers
	// refuse the login). "openid" is added when missing.
	Scopes []string
}

// DefaultConfig returns the configuration with SSO off.
func DefaultConfig() Config {
	return Config{DefaultRole: "viewer"}
}

// rank returns the privilege rank of role, 0 being the highest, in the
// order of auth.Roles (the one list of netmon's roles): when a user's
// groups map to several roles, the most privileged wins. A role netmon
// does not know ranks below every known one, so a typo in GroupRoles can
// never outrank a real role.
func rank(role string) int {
	roles := auth.Roles(true)
	if i := slices.Index(roles, auth.Role(role)); i >= 0 {
		return i
	}
	return len(roles)
}

// known reports whether role is one of netmon's.
func known(role string) bool { return rank(role) < len(auth.Roles(true)) }

// Validate reports the first problem of a configuration with SSO on; a
// configuration with SSO off is always valid. The hub calls it at start so
// that a mistake shows there rather than at the first login.
func (c Config) Validate() error {
	if c.Issuer == "" {
		return nil
	}
	if err := absoluteURL(c.Issuer); err != nil {
		return fmt.Errorf("oidc issuer: %w", err)
	}
	if c.ClientID == "" {
		return errors.New("oidc client_id: required when issuer is set")
	}
	if err := absoluteURL(c.RedirectURL); err != nil {
		return fmt.Errorf("oidc redirect_url: %w", err)
	}
	for group, role := range c.GroupRoles {
		if !known(role) {
			return fmt.Errorf("oidc group_roles[%q]: unknown role %q", group, role)
		}
	}
	if c.DefaultRole != "" && !known(c.DefaultRole) {
		return fmt.Errorf("oidc default_role: unknown role %q", c.DefaultRole)
	}
	return nil
}

func absoluteURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("not a URL")
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	return nil
}

// scopes returns the scopes to request: the configured ones with "openid"
// first, or the defaults.
func (c Config) scopes(groupsSupported bool) []string {
	if len(c.Scopes) == 0 {
		s := []string{"openid", "profile", "email"}
		if groupsSupported {
			s = append(s, "groups")
		}
		return s
	}
	if slices.Contains(c.Scopes, "openid") {
		return slices.Clone(c.Scopes)
	}
	return append([]string{"openid"}, c.Scopes...)
}
