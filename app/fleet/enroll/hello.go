package enroll

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"netmon/agentmode/wire"
	"netmon/app/errs"
	"netmon/app/fleet/intake"
	"netmon/app/secret"
	"netmon/store"
)

// Hello refusals (spec 7). Their texts say what to do, never which part of
// a secret was wrong.
var (
	errNoToken   = errs.Unauthorizedf("enroll token required: send it in the X-Enroll-Token header")
	errBadToken  = errs.Unauthorizedf("invalid, revoked or expired enroll token")
	errStaticOff = errs.Unauthorizedf("with -multi-site only site-bound enroll tokens enroll agents; the static token and site-less tokens are refused")
	errExhausted = errs.Conflictf("this enroll token has been used as often as it allows (max_uses); create a new one")
	errCIDR      = errs.Forbiddenf("this enroll token is not allowed from your address (allowed_cidrs)")
	errThrottled = errs.Throttledf(throttleBlock, "too many failed enrollment attempts from this address; try again in 60 seconds")
)

// throttleBlock is how long the enrollment throttle blocks an address
// (the identity service's policy: a minute).
const throttleBlock = 60 * time.Second

// refusals name the hello metric's result of the kinds that count as a
// failed attempt against the address: a wrong or used-up secret.
var refusals = map[errs.Kind]string{errs.Unauthorized: "unauthorized", errs.Forbidden: "forbidden", errs.Conflict: "exhausted"}

// Hello enrolls an agent (spec 4.6): it checks the enroll secret, the
// address and the token's uses, creates the agent (replacing an agent of
// the same machine) and issues its token and, with TLS and a CSR, its
// client certificate. Failures count against ip in the enrollment
// throttle; a success resets it.
func (s *Service) Hello(ctx context.Context, enrollSecret string, ip netip.Addr, h wire.Hello) (wire.HelloResponse, error) {
	if err := validHello(&h); err != nil {
		s.m.hellos.WithLabelValues("invalid").Inc()
		return wire.HelloResponse{}, err
	}
	done, ok := s.limit.Admit(ip.String())
	if !ok {
		s.m.hellos.WithLabelValues("throttled").Inc()
		return wire.HelloResponse{}, errThrottled
	}
	resp, agent, replaced, err := s.enroll(ctx, strings.TrimSpace(enrollSecret), ip, h)
	kind := errs.KindOf(err)
	switch {
	case err == nil:
		done(true)
		s.m.hellos.WithLabelValues("ok").Inc()
		s.roster.Enrolled(agent, replaced)
		s.log.Info("agent enrolled", "agent_id", resp.AgentID, "name", h.Name, "ip", ip.String(), "replaced", replaced)
		return resp, nil
	case refusals[kind] != "":
		done(false)
		s.m.hellos.WithLabelValues(refusals[kind]).Inc()
		s.log.Warn("agent enrollment refused", "kind", kind.String(), "reason", err.Error(), "ip", ip.String())
		return wire.HelloResponse{}, err
	case kind != errs.Internal:
		done(true) // a bad CSR is not a guess at the secret
		s.m.hellos.WithLabelValues("invalid").Inc()
		return wire.HelloResponse{}, err
	default:
		done(true) // the database failed, not the caller
		return wire.HelloResponse{}, err
	}
}

func (s *Service) enroll(ctx context.Context, enrollSecret string, ip netip.Addr, h wire.Hello) (wire.HelloResponse, store.Agent, int64, error) {
	if enrollSecret == "" {
		return wire.HelloResponse{}, store.Agent{}, 0, errNoToken
	}
	now := s.cfg.Now()
	agentToken := secret.New(intake.AgentTokenPrefix)
	resp := wire.HelloResponse{Accepted: true, AgentToken: agentToken, TelemetryIntervalSeconds: int(s.cfg.Interval / time.Second),
		PcapEnabled: s.cfg.PcapEnabled, ProtocolVersion: wire.ProtocolVersion}
	var replaced int64
	var created store.Agent
	// What the refusal's audit record names, as the transaction learnt it.
	var a store.Agent
	tokenName := "static"
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		a = store.Agent{Name: h.Name, Site: h.Site, MachineID: h.MachineID, TokenHash: secret.Hash(agentToken), Version: h.Version,
			ProtocolVersion: min(max(h.ProtocolVersion, 1), wire.ProtocolVersion), OS: h.OS, Arch: h.Arch, RemoteIP: ip.String(), EnrolledAt: now.Unix()}
		tokenName = "static"
		switch {
		case !strings.HasPrefix(enrollSecret, EnrollTokenPrefix) && secret.Equal(enrollSecret, s.cfg.StaticToken):
			if s.cfg.MultiSite {
				return errStaticOff
			}
		case strings.HasPrefix(enrollSecret, EnrollTokenPrefix):
			k, err := tx.EnrollTokenByHash(ctx, secret.Hash(enrollSecret))
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
				return errs.Forbiddenf("this enroll token belongs to another site than the agent's -site %q", h.Site)
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
				return errs.InvalidField("csr_pem", "%s", err.Error())
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
		actor := store.AuditActor{Username: "agent:" + a.Name, ActorType: "token"}
		_, err = tx.AppendAudit(ctx, s.auditor.Event(ctx, actor, ActionEnrollTokenUsed, fmt.Sprintf("agent:%d:%s", id, a.Name), ResultOK, detail, nil,
			map[string]any{"agent_id": id, "name": a.Name, "site": a.Site, "os": a.OS, "arch": a.Arch, "version": a.Version, "enroll_token_id": a.EnrollTokenID}))
		return err
	})
	if other, ok := errors.AsType[*store.MachineOfOtherSiteError](err); ok {
		return wire.HelloResponse{}, store.Agent{}, 0, s.refuseOtherSite(ctx, a, tokenName, ip, other)
	}
	if err != nil {
		return wire.HelloResponse{}, store.Agent{}, 0, err
	}
	return resp, created, replaced, nil
}

// errMachineOtherSite refuses a hello whose machine id is enrolled in
// another site. It names neither that site nor its agent: the caller holds
// an enroll token of its own site only.
var errMachineOtherSite = errs.Forbiddenf("this machine (machine_id) is enrolled as an agent of another site: an admin of that site (or a global admin) must delete that agent before it enrolls here")

// refuseOtherSite records the refused hello (the transaction that would
// have enrolled it rolled back: no token use taken, the other site's
// agent untouched) and returns the refusal. Without its audit record the
// refusal is not given: the caller gets the failure to write it.
func (s *Service) refuseOtherSite(ctx context.Context, a store.Agent, tokenName string, ip netip.Addr, other *store.MachineOfOtherSiteError) error {
	s.log.Warn("agent enrollment refused: machine of another site", "machine_id", a.MachineID, "site", a.Site, "agent_id", other.AgentID, "agent_site", other.Site, "ip", ip.String())
	detail := fmt.Sprintf("enroll token %d (%s) from %s refused: machine_id %q is agent %d of site %q, not of site %q",
		a.EnrollTokenID, tokenName, ip, a.MachineID, other.AgentID, other.Site, a.Site)
	actor := store.AuditActor{Username: "agent:" + a.Name, ActorType: "token"}
	rec := s.auditor.Event(ctx, actor, ActionEnrollTokenUsed, fmt.Sprintf("agent:%d", other.AgentID), ResultDenied, detail, nil,
		map[string]any{"name": a.Name, "site": a.Site, "machine_id": a.MachineID, "enroll_token_id": a.EnrollTokenID})
	if err := s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.AppendAudit(ctx, rec)
		return err
	}); err != nil {
		return fmt.Errorf("audit refused enrollment: %w", err)
	}
	return errMachineOtherSite
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
			return errs.InvalidField(f.name, "at most %d characters", f.max)
		}
		if !utf8.ValidString(f.value) {
			return errs.InvalidField(f.name, "not valid UTF-8")
		}
	}
	if h.Name == "" {
		h.Name = "agent"
	}
	if h.ProtocolVersion < 0 {
		return errs.InvalidField("protocol_version", "must be 1 or more")
	}
	return nil
}

// IssueCert signs a renewed client certificate for agent (spec 4.6).
func (s *Service) IssueCert(ctx context.Context, agentID int64, csrPEM string) (wire.CertResponse, error) {
	if s.ca == nil {
		return wire.CertResponse{}, ErrNoCA
	}
	cert, notAfter, err := s.ca.SignClient(csrPEM, agentID)
	if err != nil {
		return wire.CertResponse{}, errs.InvalidField("csr_pem", "%v", err)
	}
	if err := s.db.SetAgentCert(ctx, agentID, notAfter.Unix()); err != nil {
		return wire.CertResponse{}, err
	}
	return wire.CertResponse{ClientCertPEM: cert, CACertPEM: s.ca.CAPEM()}, nil
}
