package hub

import (
	"context"
	"path/filepath"
	"runtime/debug"
	"time"

	"netmon/app/version"
	"netmon/store"
)

// logStart says, once everything runs, what a new operator must know:
// authentication off, an open live feed, a bootstrap password that no
// longer works; then where the hub listens and every file it keeps.
func (h *Hub) logStart(ctx context.Context) {
	if !h.authRequired(ctx) {
		where := "on every interface"
		if h.loopbackOnly() {
			where = "on this machine only (" + h.cfg.Server.Listen + ")"
		}
		h.log.Warn("authentication is OFF "+where+": no -auth-password and no user; every request is served as admin. Create an admin with `netmon admin user create --create` or set NETMON_AUTH_PASSWORD",
			"listen", h.ln.Addr().String())
	} else if len(h.cfg.Live.AllowedOrigins) == 0 {
		h.log.Warn("no -public-url (and no -tls-hosts): the live feed /ws accepts WebSocket upgrades from pages of any origin, guarded only by the session cookie's SameSite=Lax; set -public-url to the address users open")
	}
	if h.cfg.Auth.Password != "" {
		if rbac, err := h.db.EnabledAdminExists(ctx); err == nil && rbac {
			h.log.Warn("the bootstrap password (-auth-password / NETMON_AUTH_PASSWORD) no longer signs anyone in: an enabled admin user exists (it works again only if no enabled admin remains); remove it from the configuration")
		}
	}
	h.log.Info("hub started",
		"version", version.Version,
		"addr", h.ln.Addr().String(),
		"db", h.db.Redacted(),
		"dialect", string(h.db.Dialect()),
		"retention_hours", h.cfg.Retention.Hours,
		"prune", h.cfg.Retention.Enabled,
		"dev", h.cfg.UI.Dev,
		"tls", h.pki != nil,
		"startup_ms", time.Since(h.begin).Milliseconds())
	// Every file and directory the hub keeps, as absolute paths: started
	// from another directory, a relative path means other files.
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	files := []any{"vault_key", abs(h.cfg.Vault.File), "record_dir", abs(h.cfg.Record.Dir), "geoip_dir", abs(h.cfg.Geo.Dir)}
	if h.db.Dialect() == store.SQLite {
		files = append(files, "database", abs(h.cfg.Store.DSN))
	}
	if h.pki != nil {
		files = append(files, "tls_dir", abs(h.cfg.TLS.Dir))
	}
	h.log.Info("hub files", files...)
	// Start-up garbage (the GeoIP survey walks every network of each
	// database) is returned to the OS now rather than at the scavenger's
	// pace: idle RSS is what an operator looks at first.
	debug.FreeOSMemory()
}

// authRequired reports whether authentication is on (true on error: the
// warning is only for the plainly open case).
func (h *Hub) authRequired(ctx context.Context) bool {
	on, err := h.auth.Required(ctx)
	return err != nil || on
}
