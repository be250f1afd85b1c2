package hub

import (
	"context"
	"fmt"

	"netmon/app/audit"
	"netmon/app/auth"
	"netmon/app/fleet"
	"netmon/app/fleet/enroll"
	"netmon/app/fleet/pki"
)

// buildFleet builds the hub's CA (with -tls) and the fleet service. Both
// need I/O to be built: the CA's files are loaded or created in -tls-dir,
// and when the operator set no static enroll token the hub makes one,
// keeps it sealed in the database and logs it once, so that a first agent
// can enroll and later restarts keep it.
func (h *Hub) buildFleet(ctx context.Context) error {
	var ca fleet.CA
	if h.cfg.TLS.Enabled {
		a, err := pki.New(h.log.With("component", "pki"), h.cfg.TLS, pki.Deps{})
		if err != nil {
			return fmt.Errorf("hub TLS: %w", err)
		}
		h.pki, ca = a, a
	}
	fc := h.cfg.Fleet
	if fc.StaticToken == "" {
		static, created, err := enroll.LoadStaticToken(ctx, h.db, h.vault)
		if err != nil {
			return err
		}
		if created {
			// Shown once, when made, on purpose: it is how the operator of
			// a fresh hub learns the bootstrap secret. Set -enroll-token or
			// use ent_ tokens to keep it out of the output. The start banner
			// prints it; the log says only that it was made.
			h.newEnrollToken = static
			h.log.Warn("no -enroll-token set: generated a static enroll token, kept sealed in the database across restarts; the start banner shows it once (replace it with `netmon admin enroll-token rotate-static`)")
		} else {
			h.log.Info("static enroll token loaded from the database (set -enroll-token, or rotate it with `netmon admin enroll-token rotate-static`)")
		}
		fc.StaticToken = static
	}
	// Enrollment has its own throttle with the login policy (spec 5.11),
	// so failed enrollments and failed logins do not block each other.
	limiter := auth.NewThrottle(h.cfg.EnrollThrottle, "enroll", h.reg)
	h.fleet = fleet.New(h.log.With("component", "fleet"), fc, fleet.Deps{DB: h.db, Auditor: audit.Builder{}, Sink: h.ingest, Limiter: limiter, CA: ca, Registry: h.reg})
	h.parts.add("fleet", h.fleet.Start, noCtx(h.fleet.Stop))
	return nil
}
