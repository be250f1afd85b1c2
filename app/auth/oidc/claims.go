package oidc

import (
	"encoding/json"
	"errors"

	gooidc "github.com/coreos/go-oidc/v3/oidc"

	"netmon/app/errs"
)

// idClaims are the ID token claims netmon reads beyond those go-oidc
// checked.
type idClaims struct {
	Email             string      `json:"email"`
	PreferredUsername string      `json:"preferred_username"`
	Name              string      `json:"name"`
	Groups            stringOrSet `json:"groups"`
	Roles             stringOrSet `json:"roles"`
	AuthorizedParty   string      `json:"azp"`
}

// stringOrSet decodes a claim that providers send either as an array of
// strings or as one string. Any other shape decodes as empty rather than
// failing the login: a user whose group claim is unreadable gets the
// default role, as one without groups would.
type stringOrSet []string

// UnmarshalJSON implements json.Unmarshaler.
func (s *stringOrSet) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		if one != "" {
			*s = stringOrSet{one}
		}
		return nil
	}
	var many []string
	if json.Unmarshal(b, &many) == nil {
		*s = many
	}
	return nil
}

// login turns a verified ID token into a Login.
func (p *Provider) login(idt *gooidc.IDToken) (Login, error) {
	if idt.Subject == "" {
		return Login{}, fail(errs.Unauthorized, msgRejected+": no subject", nil)
	}
	var c idClaims
	if err := idt.Claims(&c); err != nil {
		return Login{}, fail(errs.Unauthorized, msgRejected+": unreadable claims", err)
	}
	// OpenID Connect Core 3.1.3.7: with several audiences the token must
	// name us as its authorized party. go-oidc checks only that we are
	// among the audiences.
	if len(idt.Audience) > 1 && c.AuthorizedParty != p.cfg.ClientID {
		return Login{}, fail(errs.Unauthorized, msgRejected+": wrong audience", errors.New("several audiences and azp is not the client id"))
	}
	groups := []string(c.Groups)
	if len(groups) == 0 {
		groups = c.Roles
	}
	l := Login{
		Issuer:   idt.Issuer,
		Subject:  idt.Subject,
		Username: firstNonEmpty(c.PreferredUsername, c.Email, idt.Subject),
		Email:    c.Email,
		Name:     c.Name,
		Groups:   groups,
		Role:     p.role(groups),
	}
	return l, nil
}

// role maps groups through GroupRoles; the most privileged match wins,
// DefaultRole when none matches.
func (p *Provider) role(groups []string) string {
	best := ""
	for _, g := range groups {
		r, ok := p.cfg.GroupRoles[g]
		if !ok {
			continue
		}
		if best == "" || rank(r) < rank(best) {
			best = r
		}
	}
	if best == "" {
		return p.cfg.DefaultRole
	}
	return best
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
