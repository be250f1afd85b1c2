package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"unicode/utf8"

	"netmon/agentmode/wire"
	"netmon/app/audit"
	"netmon/store"
)

// Token prefixes: ent_ enroll tokens (spec 2.10), agt_ agent tokens.
const (
	EnrollTokenPrefix = "ent_"
	AgentTokenPrefix  = "agt_"
)

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
func (s *Service) CreateEnrollToken(ctx context.Context, actor Actor, req EnrollTokenCreate) (EnrollTokenCreated, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" || utf8.RuneCountInString(name) > 64 {
		return EnrollTokenCreated{}, errorf(http.StatusBadRequest, "name must be 1-64 characters")
	}
	site := strings.TrimSpace(req.Site)
	if actor.Site != "" {
		site = actor.Site
	}
	if utf8.RuneCountInString(site) > 64 {
		return EnrollTokenCreated{}, errorf(http.StatusBadRequest, "site must be at most 64 characters")
	}
	if s.cfg.MultiSite && site == "" {
		return EnrollTokenCreated{}, errorf(http.StatusBadRequest, "site is required with -multi-site: agents enroll only with site-bound tokens")
	}
	now := s.cfg.Now().Unix()
	k := store.EnrollToken{Name: name, Site: site, CreatedBy: actor.Username, CreatedAt: now, MaxUses: 1}
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
		return EnrollTokenCreated{}, errorf(http.StatusBadRequest, "expires_in_days %d: must be -1 (never), 0 (1 day) or 1-3650", days)
	}
	if req.MaxUses != nil {
		if *req.MaxUses < 0 || *req.MaxUses > 1_000_000 {
			return EnrollTokenCreated{}, errorf(http.StatusBadRequest, "max_uses %d: must be 0 (unlimited) to 1000000", *req.MaxUses)
		}
		k.MaxUses = *req.MaxUses
	}
	cidrs, err := parseCIDRs(req.AllowedCIDRs)
	if err != nil {
		return EnrollTokenCreated{}, err
	}
	k.AllowedCIDRs = strings.Join(cidrs, ",")
	secret := newToken(EnrollTokenPrefix)
	k.TokenHash = hashToken(secret)
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.CreateEnrollToken(ctx, k)
		if err != nil {
			return err
		}
		k.ID = id
		_, err = tx.AppendAudit(ctx, audit.Event(ctx, actor.audit(), audit.ActionEnrollTokenCreate, enrollTarget(k), audit.ResultOK, "", nil, s.itemOf(k)))
		return err
	})
	if err != nil {
		return EnrollTokenCreated{}, fmt.Errorf("create enroll token: %w", err)
	}
	return EnrollTokenCreated{OK: true, ID: k.ID, Token: secret, Item: s.itemOf(k)}, nil
}

func (a Actor) audit() audit.Actor {
	return audit.Actor{Username: a.Username, Role: a.Role, ActorType: a.ActorType}
}

func enrollTarget(k store.EnrollToken) string { return fmt.Sprintf("enroll_token:%d:%s", k.ID, k.Name) }

// parseCIDRs normalises prefixes; a bare address means just that address.
func parseCIDRs(in []string) ([]string, error) {
	if len(in) > 64 {
		return nil, errorf(http.StatusBadRequest, "allowed_cidrs: at most 64 prefixes")
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
				return nil, errorf(http.StatusBadRequest, "allowed_cidrs: %q is not a prefix like 10.0.0.0/8 or an address", c)
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

// ListEnrollTokens lists the tokens visible to actor.
func (s *Service) ListEnrollTokens(ctx context.Context, actor Actor) ([]EnrollTokenItem, error) {
	ks, err := s.db.ListEnrollTokens(ctx, actor.Site)
	if err != nil {
		return nil, err
	}
	out := make([]EnrollTokenItem, 0, len(ks))
	for _, k := range ks {
		out = append(out, s.itemOf(k))
	}
	return out, nil
}

// RevokeEnrollToken revokes token id: the next hello with it gets 401.
func (s *Service) RevokeEnrollToken(ctx context.Context, actor Actor, id int64) (EnrollTokenItem, error) {
	var item EnrollTokenItem
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		k, err := tx.RevokeEnrollToken(ctx, id, s.cfg.Now().Unix())
		if err != nil {
			return err
		}
		if actor.Site != "" && k.Site != actor.Site {
			return store.ErrNotFound // rolls back: another site's token is not there for this caller
		}
		before := s.itemOf(k)
		if k.RevokedAt == 0 {
			k.RevokedAt = s.cfg.Now().Unix()
		}
		item = s.itemOf(k)
		_, err = tx.AppendAudit(ctx, audit.Event(ctx, actor.audit(), audit.ActionEnrollTokenRevoke, enrollTarget(k), audit.ResultOK, "", before, item))
		return err
	})
	if err != nil {
		return EnrollTokenItem{}, storeErr(err, "enroll token")
	}
	return item, nil
}

// Hello refusals (spec 7). Their texts say what to do, never which part of
// a secret was wrong.
var (
	errNoToken   = &Error{Status: http.StatusUnauthorized, Msg: "enroll token required: send it in the X-Enroll-Token header"}
	errBadToken  = &Error{Status: http.StatusUnauthorized, Msg: "invalid, revoked or expired enroll token"}
	errStaticOff = &Error{Status: http.StatusUnauthorized, Msg: "with -multi-site only site-bound enroll tokens enroll agents; the static token and site-less tokens are refused"}
	errExhausted = &Error{Status: http.StatusConflict, Msg: "this enroll token has been used as often as it allows (max_uses); create a new one"}
	errCIDR      = &Error{Status: http.StatusForbidden, Msg: "this enroll token is not allowed from your address (allowed_cidrs)"}
	errThrottled = &Error{Status: http.StatusTooManyRequests, Msg: "too many failed enrollment attempts from this address; try again in 60 seconds"}
)

// Hello enrolls an agent (spec 4.6): it checks the enroll secret, the
// address and the token's uses, creates the agent (replacing an agent of
// the same machine) and issues its token and, with TLS and a CSR, its
// client certificate. Failures count against ip in the enrollment
// throttle; a success resets it.
func (s *Service) Hello(ctx context.Context, secret string, ip netip.Addr, h wire.Hello) (wire.HelloResponse, error) {
	if err := validHello(&h); err != nil {
		s.m.hellos.WithLabelValues("invalid").Inc()
		return wire.HelloResponse{}, err
	}
	done, ok := s.limit.Begin(ip.String())
	if !ok {
		s.m.hellos.WithLabelValues("throttled").Inc()
		return wire.HelloResponse{}, errThrottled
	}
	resp, agent, replaced, err := s.enroll(ctx, strings.TrimSpace(secret), ip, h)
	var fe *Error
	switch {
	case err == nil:
		done(true)
		s.m.hellos.WithLabelValues("ok").Inc()
		s.forget(replaced)
		// The agent's first batch follows within an interval: resolving
		// its token from the database then would cost a query per agent
		// (a fifth of the intake's CPU while a fleet rolls out).
		s.remember(agent)
		s.cacheToken(agent.TokenHash, agent)
		s.log.Info("agent enrolled", "agent_id", resp.AgentID, "name", h.Name, "ip", ip.String(), "replaced", replaced)
		return resp, nil
	case errors.As(err, &fe) && (fe.Status == http.StatusUnauthorized || fe.Status == http.StatusForbidden || fe.Status == http.StatusConflict):
		done(false)
		s.m.hellos.WithLabelValues(map[int]string{401: "unauthorized", 403: "forbidden", 409: "exhausted"}[fe.Status]).Inc()
		s.log.Warn("agent enrollment refused", "status", fe.Status, "reason", fe.Msg, "ip", ip.String())
		return wire.HelloResponse{}, err
	case errors.As(err, &fe):
		done(true) // a bad CSR is not a guess at the secret
		s.m.hellos.WithLabelValues("invalid").Inc()
		return wire.HelloResponse{}, err
	default:
		done(true) // the database failed, not the caller
		return wire.HelloResponse{}, err
	}
}

func (s *Service) enroll(ctx context.Context, secret string, ip netip.Addr, h wire.Hello) (wire.HelloResponse, store.Agent, int64, error) {
	if secret == "" {
		return wire.HelloResponse{}, store.Agent{}, 0, errNoToken
	}
	now := s.cfg.Now()
	agentToken := newToken(AgentTokenPrefix)
	resp := wire.HelloResponse{Accepted: true, AgentToken: agentToken, TelemetryIntervalSeconds: int(s.cfg.Interval / 1e9),
		PcapEnabled: s.cfg.PcapEnabled, ProtocolVersion: wire.ProtocolVersion}
	var replaced int64
	var created store.Agent
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		a := store.Agent{Name: h.Name, Site: h.Site, MachineID: h.MachineID, TokenHash: hashToken(agentToken), Version: h.Version,
			ProtocolVersion: min(max(h.ProtocolVersion, 1), wire.ProtocolVersion), OS: h.OS, Arch: h.Arch, RemoteIP: ip.String(), EnrolledAt: now.Unix()}
		tokenName := "static"
		switch {
		case !strings.HasPrefix(secret, EnrollTokenPrefix) && equalSecret(secret, s.cfg.StaticToken):
			if s.cfg.MultiSite {
				return errStaticOff
			}
		case strings.HasPrefix(secret, EnrollTokenPrefix):
			k, err := tx.EnrollTokenByHash(ctx, hashToken(secret))
			if errors.Is(err, store.ErrNotFound) {
				return errBadToken
			}
			if err != nil {
				return err
			}
			switch {
			case k.RevokedAt != 0, k.ExpiresAt != 0 && now.Unix() >= k.ExpiresAt:
				return errBadToken
			case s.cfg.MultiSite && k.Site == "":
				return errStaticOff
			case s.cfg.MultiSite && h.Site != "" && h.Site != k.Site:
				return &Error{Status: http.StatusForbidden, Msg: fmt.Sprintf("this enroll token belongs to another site than the agent's -site %q", h.Site)}
			case !cidrAllows(k.AllowedCIDRs, ip):
				return errCIDR
			}
			ok, err := tx.UseEnrollToken(ctx, k.ID, now.Unix())
			if err != nil {
				return err
			}
			if !ok {
				return errExhausted
			}
			if k.Site != "" {
				a.Site = k.Site
			}
			a.EnrollTokenID, tokenName = k.ID, k.Name
		default:
			return errBadToken
		}
		id, old, err := tx.CreateAgent(ctx, a)
		if err != nil {
			return err
		}
		a.ID, replaced = id, old
		created = a
		resp.AgentID = id
		if h.CSRPEM != "" && s.ca != nil {
			cert, notAfter, err := s.ca.SignClient(h.CSRPEM, id)
			if err != nil {
				return &Error{Status: http.StatusBadRequest, Msg: "csr_pem: " + err.Error()}
			}
			if err := tx.SetAgentCert(ctx, id, notAfter.Unix()); err != nil {
				return err
			}
			resp.ClientCertPEM, resp.CACertPEM = cert, s.ca.CAPEM()
		}
		detail := fmt.Sprintf("enroll token %d (%s) enrolled agent %d from %s", a.EnrollTokenID, tokenName, id, ip)
		if old != 0 {
			detail += fmt.Sprintf("; replaced agent %d of the same machine", old)
		}
		actor := audit.Actor{Username: "agent:" + a.Name, ActorType: "token"}
		_, err = tx.AppendAudit(ctx, audit.Event(ctx, actor, audit.ActionEnrollTokenUsed, fmt.Sprintf("agent:%d:%s", id, a.Name), audit.ResultOK, detail, nil,
			map[string]any{"agent_id": id, "name": a.Name, "site": a.Site, "os": a.OS, "arch": a.Arch, "version": a.Version, "enroll_token_id": a.EnrollTokenID}))
		return err
	})
	if err != nil {
		return wire.HelloResponse{}, store.Agent{}, 0, err
	}
	return resp, created, replaced, nil
}

// validHello bounds and cleans the hello's free-text fields.
func validHello(h *wire.Hello) error {
	h.Name, h.Site = strings.TrimSpace(h.Name), strings.TrimSpace(h.Site)
	for _, f := range []struct {
		name  string
		value string
		max   int
	}{{"name", h.Name, 128}, {"site", h.Site, 64}, {"version", h.Version, 64}, {"os", h.OS, 32}, {"arch", h.Arch, 32}, {"machine_id", h.MachineID, 128}} {
		if utf8.RuneCountInString(f.value) > f.max {
			return errorf(http.StatusBadRequest, "%s: at most %d characters", f.name, f.max)
		}
		if !utf8.ValidString(f.value) {
			return errorf(http.StatusBadRequest, "%s: not valid UTF-8", f.name)
		}
	}
	if h.Name == "" {
		h.Name = "agent"
	}
	if h.ProtocolVersion < 0 {
		return errorf(http.StatusBadRequest, "protocol_version: must be 1 or more")
	}
	return nil
}
