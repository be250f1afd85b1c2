package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"netmon/app/secret"
	"netmon/store"
)

// TokenView is an API token as listed: never the secret nor its hash.
type TokenView struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Role      string `json:"role"`
	Site      string `json:"site"`
	CreatedBy string `json:"created_by"`
	CreatedAt int64  `json:"created_at"`
	// LastUsed is Unix seconds at one-minute resolution; 0 = never.
	LastUsed int64 `json:"last_used"`
}

func tokenViewOf(k store.APIToken) TokenView {
	return TokenView{ID: k.ID, Name: k.Name, Role: k.Role, Site: k.Site, CreatedBy: k.CreatedBy, CreatedAt: k.CreatedAt, LastUsed: k.LastUsed}
}

// TokenCreate is the body of POST /api/v1/tokens.
type TokenCreate struct {
	Name string `json:"name"`
	Role string `json:"role"`
	Site string `json:"site,omitempty"`
}

// TokenCreated is the answer to POST /api/v1/tokens: the only time the
// secret is shown.
type TokenCreated struct {
	Token string `json:"token"`
	TokenView
}

// ListTokens returns the tokens the actor may see.
func (s *Service) ListTokens(ctx context.Context, actor *Identity) ([]TokenView, error) {
	ks, err := s.db.ListAPITokens(ctx, actor.SiteFilter())
	if err != nil {
		return nil, err
	}
	out := make([]TokenView, 0, len(ks))
	for _, k := range ks {
		out = append(out, tokenViewOf(k))
	}
	return out, nil
}

// CreateToken makes an API token; only its hash is stored.
func (s *Service) CreateToken(ctx context.Context, actor *Identity, req TokenCreate) (TokenCreated, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" || utf8.RuneCountInString(name) > 64 {
		return TokenCreated{}, invalidField("name", "name must be 1-64 characters")
	}
	site := actor.PinSite(strings.TrimSpace(req.Site))
	if err := s.checkGrant(actor, Role(req.Role), site); err != nil {
		return TokenCreated{}, err
	}
	tok := secret.New(apiTokenPrefix)
	k := store.APIToken{Name: name, Role: req.Role, Site: site, TokenHash: secret.Hash(tok), CreatedBy: actor.Username}
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.CreateAPIToken(ctx, k)
		if err != nil {
			return err
		}
		k.ID = id
		_, err = tx.AppendAudit(ctx, s.event(ctx, actorOf(actor), ActionTokenCreate, tokenTarget(k), ResultOK, "", nil, tokenViewOf(k)))
		return err
	})
	if err != nil {
		return TokenCreated{}, err
	}
	v := tokenViewOf(k)
	v.CreatedAt = s.now().Unix()
	return TokenCreated{Token: tok, TokenView: v}, nil
}

func tokenTarget(k store.APIToken) string { return fmt.Sprintf("token:%d:%s", k.ID, k.Name) }

// DeleteToken revokes an API token at once.
func (s *Service) DeleteToken(ctx context.Context, actor *Identity, id int64) error {
	ks, err := s.db.ListAPITokens(ctx, actor.SiteFilter())
	if err != nil {
		return err
	}
	var found *store.APIToken
	for i := range ks {
		if ks[i].ID == id {
			found = &ks[i]
		}
	}
	if found == nil {
		return notFound("token")
	}
	if err := s.checkGrant(actor, Role(found.Role), found.Site); err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		k, err := tx.DeleteAPIToken(ctx, id)
		if err != nil {
			return err
		}
		_, err = tx.AppendAudit(ctx, s.event(ctx, actorOf(actor), ActionTokenDelete, tokenTarget(k), ResultOK, "", tokenViewOf(k), nil))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return notFound("token")
	}
	return err
}
