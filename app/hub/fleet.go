package hub

import (
	"context"
	"fmt"
	"time"

	"netmon/app/audit"
	"netmon/app/auth"
	"netmon/app/fleet"
	"netmon/app/fleet/enroll"
	"netmon/app/fleet/pki"
)

// startFleet builds the hub's CA (with -tls) and the fleet service. When
// the operator set no static enroll token, the hub makes one, keeps it
// sealed in the database and logs it once, so that a first agent can
// enroll and later restarts keep it.
func (h *Hub) startFleet(ctx context.Context) error {
	fc := h.cfg.Fleet
	var ca fleet.CA
	if fc.TLS {
		pcfg := pki.DefaultConfig()
		pcfg.Dir, pcfg.CertFile, pcfg.KeyFile = fc.TLSDir, fc.TLSCert, fc.TLSKey
		if len(fc.TLSHosts) > 0 {
			pcfg.Hosts = fc.TLSHosts
		}
		a, err := pki.New(h.log.With("component", "pki"), pcfg)
		if err != nil {
			return fmt.Errorf("hub TLS: %w", err)
		}
		h.pki, ca = a, a
	}
	static := fc.EnrollToken
	if static == "" {
		var created bool
		var err error
		static, created, err = enroll.LoadStaticToken(ctx, h.db, h.vault)
		if err != nil {
			return err
		}
		if created {
			// Logged once, when made, on purpose: it is how the operator of
			// a fresh hub learns the bootstrap secret. Set -enroll-token or
			// use ent_ tokens to keep it out of the log.
			h.log.Warn("no -enroll-token set: generated a static enroll token, kept sealed in the database across restarts (replace it with `netmon admin enroll-token rotate-static`)", "enroll_token", static)
		} else {
			h.log.Info("static enroll token loaded from the database (set -enroll-token, or rotate it with `netmon admin enroll-token rotate-static`)")
		}
	}
	cfg := fleet.DefaultConfig()
	cfg.StaticToken, cfg.MultiSite, cfg.PcapEnabled = static, h.cfg.Access.MultiSite, fc.AgentPcap
	cfg.Interval = time.Duration(fc.AgentInterval) * time.Second
	cfg.ArchiveDays, cfg.Archive = fc.AgentArchiveDays, h.cfg.Prune
	// Enrollment has its own throttle with the login policy (spec 5.11),
	// so failed enrollments and failed logins do not block each other.
	tcfg := auth.DefaultThrottleConfig()
	tcfg.FailuresOnly = true
	limiter := throttleLimiter{auth.NewThrottle(tcfg, "enroll", h.reg)}
	h.fleet = fleet.New(h.log.With("component", "fleet"), cfg, fleet.Deps{DB: h.db, Auditor: audit.Builder{}, Sink: h.queue, Limiter: limiter, CA: ca, Registry: h.reg})
	return h.fleet.Start()
}

// throttleLimiter adapts the identity service's throttle to fleet.Limiter.
type throttleLimiter struct{ t *auth.Throttle }

func (l throttleLimiter) Begin(key string) (func(bool), bool) {
	a, ok := l.t.Begin(key)
	if !ok {
		return nil, false
	}
	return func(success bool) {
		if success {
			a.Succeed()
		} else {
			a.Fail()
		}
	}, true
}
