// Package enroll is how an agent joins the fleet (spec 2.10, 4.6): the
// enroll tokens operators create, list and revoke, the hub's static
// enroll secret, the hello that checks a secret and enrolls an agent, and
// the client certificates the hub's CA signs at the hello and on renewal.
//
// It is its own package because it guards the fleet's one door: every
// refusal counts against the address in the throttle, every enrollment is
// audited, and it changes the intake's memory only through the small
// Roster interface. It imports the store for its entity types, the wire
// protocol, the errs and secret leaves, and the intake for the agent
// token's prefix; audit records are built by the Auditor it is handed.
// app/fleet composes it.
package enroll

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"netmon/app/errs"
	"netmon/app/secret"
	"netmon/store"
)

// EnrollTokenPrefix starts every enroll token (spec 2.10); a secret
// without it is the static enroll secret.
const EnrollTokenPrefix = "ent_"

// EnrollTokenCreate is the body of POST /api/v1/enroll-tokens.
type EnrollTokenCreate struct {
	Name string `json:"name" doc:"label, 1-64 characters"`
	// Site binds the token (and the agents it enrolls) to a site; forced
	// to the caller's site for a site-bound caller; required with -multi-site.
	Site string `json:"site,omitempty" doc:"site of the agents it enrolls; required with -multi-site"`
	// ExpiresInDays: omitted or 0 = 1 day, -1 = never, else 1-3650.
	ExpiresInDays *int `json:"expires_in_days,omitempty" doc:"omitted or 0: 1 day; -1: never; else 1-3650 days"`
	// MaxUses: omitted = 1 (single use), 0 = unlimited.
	MaxUses *int `json:"max_uses,omitempty" doc:"enrollments allowed: omitted = 1, 0 = unlimited"`
	// AllowedCIDRs restricts the source address of the hello.
	AllowedCIDRs []string `json:"allowed_cidrs,omitempty" doc:"source prefixes allowed to enroll with it (e.g. 10.0.0.0/8); empty: any"`
}

// EnrollTokenCreated is the answer: the secret, shown this once.
type EnrollTokenCreated struct {
	OK    bool            `json:"ok"`
	ID    int64           `json:"id"`
	Token string          `json:"token" doc:"ent_… secret; shown only in this answer"`
	Item  EnrollTokenItem `json:"item"`
}

// EnrollTokenItem is an enroll token as listed (never the secret).
type EnrollTokenItem struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	Site         string   `json:"site"`
	CreatedAt    int64    `json:"created_at"`
	CreatedBy    string   `json:"created_by"`
	ExpiresAt    int64    `json:"expires_at" doc:"Unix seconds; 0 = never"`
	LastUsed     int64    `json:"last_used"`
	Revoked      bool     `json:"revoked"`
	RevokedAt    int64    `json:"revoked_at"`
	MaxUses      int      `json:"max_uses" doc:"0 = unlimited"`
	Uses         int      `json:"uses"`
	AllowedCIDRs []string `json:"allowed_cidrs"`
	// State is active, revoked, expired or exhausted.
	State string `json:"state" enum:"active,revoked,expired,exhausted"`
}

func (s *Service) itemOf(k store.EnrollToken) EnrollTokenItem {
	it := EnrollTokenItem{ID: k.ID, Name: k.Name, Site: k.Site, CreatedAt: k.CreatedAt, CreatedBy: k.CreatedBy, ExpiresAt: k.ExpiresAt,
		LastUsed: k.LastUsed, Revoked: k.RevokedAt != 0, RevokedAt: k.RevokedAt, MaxUses: k.MaxUses, Uses: k.Uses, AllowedCIDRs: []string{}}
	if k.AllowedCIDRs != "" {
		it.AllowedCIDRs = strings.Split(k.AllowedCIDRs, ",")
	}
	now := s.cfg.Now().Unix()
	switch {
	case k.RevokedAt != 0:
		it.State = "revoked"
	case k.ExpiresAt != 0 && now >= k.ExpiresAt:
		it.State = "expired"
	case k.MaxUses > 0 && k.Uses >= k.MaxUses:
		it.State = "exhausted"
	default:
		it.State = "active"
	}
	return it
}

// CreateEnrollToken makes an enroll token and returns its secret once.
// A site-bound caller (callerSite != "") makes tokens of its site only.
func (s *Service) CreateEnrollToken(ctx context.Context, by store.AuditActor, callerSite string, req EnrollTokenCreate) (EnrollTokenCreated, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" || utf8.RuneCountInString(name) > 64 {
		return EnrollTokenCreated{}, invalid("name", "name must be 1-64 characters")
	}
	site := strings.TrimSpace(req.Site)
	if callerSite != "" {
		site = callerSite
	}
	if utf8.RuneCountInString(site) > 64 {
		return EnrollTokenCreated{}, invalid("site", "site must be at most 64 characters")
	}
	if s.cfg.MultiSite && site == "" {
		return EnrollTokenCreated{}, invalid("site", "site is required with -multi-site: agents enroll only with site-bound tokens")
	}
	now := s.cfg.Now().Unix()
	k := store.EnrollToken{Name: name, Site: site, CreatedBy: by.Username, CreatedAt: now, MaxUses: 1}
	days := 0
	if req.ExpiresInDays != nil {
		days = *req.ExpiresInDays
	}
	switch {
	case days == -1:
		k.ExpiresAt = 0
	case days == 0:
		k.ExpiresAt = now + 86400
	case days >= 1 && days <= 3650:
		k.ExpiresAt = now + int64(days)*86400
	default:
		return EnrollTokenCreated{}, invalid("expires_in_days", "expires_in_days %d: must be -1 (never), 0 (1 day) or 1-3650", days)
	}
	if req.MaxUses != nil {
		if *req.MaxUses < 0 || *req.MaxUses > 1_000_000 {
			return EnrollTokenCreated{}, invalid("max_uses", "max_uses %d: must be 0 (unlimited) to 1000000", *req.MaxUses)
		}
		k.MaxUses = *req.MaxUses
	}
	cidrs, err := parseCIDRs(req.AllowedCIDRs)
	if err != nil {
		return EnrollTokenCreated{}, err
	}
	k.AllowedCIDRs = strings.Join(cidrs, ",")
	tok := secret.New(EnrollTokenPrefix)
	k.TokenHash = secret.Hash(tok)
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.CreateEnrollToken(ctx, k)
		if err != nil {
			return err
		}
		k.ID = id
		_, err = tx.AppendAudit(ctx, s.auditor.Event(ctx, by, ActionEnrollTokenCreate, enrollTarget(k), ResultOK, "", nil, s.itemOf(k)))
		return err
	})
	if err != nil {
		return EnrollTokenCreated{}, fmt.Errorf("create enroll token: %w", err)
	}
	return EnrollTokenCreated{OK: true, ID: k.ID, Token: tok, Item: s.itemOf(k)}, nil
}

func enrollTarget(k store.EnrollToken) string { return fmt.Sprintf("enroll_token:%d:%s", k.ID, k.Name) }

// parseCIDRs normalises prefixes; a bare address means just that address.
func parseCIDRs(in []string) ([]string, error) {
	if len(in) > 64 {
		return nil, errs.InvalidField("allowed_cidrs", "at most 64 prefixes")
	}
	out := make([]string, 0, len(in))
	for _, c := range in {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		p, err := netip.ParsePrefix(c)
		if err != nil {
			a, aerr := netip.ParseAddr(c)
			if aerr != nil {
				return nil, errs.InvalidField("allowed_cidrs", "%q is not a prefix like 10.0.0.0/8 or an address", c)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		out = append(out, p.Masked().String())
	}
	return out, nil
}

// cidrAllows reports whether ip is inside one of the comma-separated
// prefixes (all addresses when there are none).
func cidrAllows(cidrs string, ip netip.Addr) bool {
	if cidrs == "" {
		return true
	}
	ip = ip.Unmap()
	for _, c := range strings.Split(cidrs, ",") {
		if p, err := netip.ParsePrefix(c); err == nil && p.Contains(ip) {
			return true
		}
	}
	return false
}

// ListEnrollTokens lists the tokens of site ("" = all sites).
func (s *Service) ListEnrollTokens(ctx context.Context, site string) ([]EnrollTokenItem, error) {
	ks, err := s.db.ListEnrollTokens(ctx, site)
	if err != nil {
		return nil, err
	}
	out := make([]EnrollTokenItem, 0, len(ks))
	for _, k := range ks {
		out = append(out, s.itemOf(k))
	}
	return out, nil
}

// RevokeEnrollToken revokes token id: the next hello with it is refused.
// A site-bound caller (callerSite != "") sees only its site's tokens.
func (s *Service) RevokeEnrollToken(ctx context.Context, by store.AuditActor, callerSite string, id int64) (EnrollTokenItem, error) {
	var item EnrollTokenItem
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		k, err := tx.RevokeEnrollToken(ctx, id, s.cfg.Now().Unix())
		if err != nil {
			return err
		}
		if callerSite != "" && k.Site != callerSite {
			return store.ErrNotFound // rolls back: another site's token is not there for this caller
		}
		before := s.itemOf(k)
		if k.RevokedAt == 0 {
			k.RevokedAt = s.cfg.Now().Unix()
		}
		item = s.itemOf(k)
		_, err = tx.AppendAudit(ctx, s.auditor.Event(ctx, by, ActionEnrollTokenRevoke, enrollTarget(k), ResultOK, "", before, item))
		return err
	})
	if err != nil {
		return EnrollTokenItem{}, storeErr(err, "enroll token")
	}
	return item, nil
}

// invalid is an Invalid error about field whose message, unlike
// errs.InvalidField's, is worded in full (the API's bodies keep their
// wording).
func invalid(field, format string, args ...any) error {
	return &errs.Error{Kind: errs.Invalid, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// storeErr turns the store's errors that mean something to the caller
// into kinds.
func storeErr(err error, what string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errs.NotFoundf("%s not found", what).Wrap(err)
	case errors.Is(err, store.ErrConflict):
		return errs.Conflictf("%s already exists", what).Wrap(err)
	}
	return err
}
