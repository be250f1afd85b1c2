package hub

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"runtime/debug"
	"strings"
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
	} else if !h.live.ChecksOrigin() {
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

// Banner is what the hub command prints once it is serving, for the
// person who just started it: the address to open, how to sign in, how to
// enroll an agent and where flows and syslog go. It repeats nothing secret
// except the static enroll token made at this very start (shown once).
func (h *Hub) Banner(ctx context.Context) string {
	url := h.consoleURL()
	var b strings.Builder
	fmt.Fprintf(&b, "netmon hub %s is running\n", version.Version)
	fmt.Fprintf(&b, "  Console   %s\n", url)
	switch admin, err := h.db.EnabledAdminExists(ctx); {
	case !h.authRequired(ctx):
		db := h.db.Redacted()
		if h.db.Dialect() == store.SQLite {
			if a, err := filepath.Abs(h.cfg.Store.DSN); err == nil {
				db = a
			}
		}
		fmt.Fprintf(&b, "  Sign in   authentication is OFF: every request is served as admin; create an admin with\n"+
			"            netmon admin user create --username admin --role admin --db %s\n", db)
	case err == nil && admin:
		b.WriteString("  Sign in   with your user name and password (`netmon admin user list` lists the accounts)\n")
	default:
		b.WriteString("  Sign in   with the bootstrap password (-auth-password); then create named users under Admin → Users\n")
	}
	token := "<static enroll token>"
	if h.newEnrollToken != "" {
		token = h.newEnrollToken
	}
	fmt.Fprintf(&b, "  Agents    netmon agent -hub-url %s -hub-token %s\n", url, token)
	if h.newEnrollToken != "" {
		b.WriteString("            (this static enroll token was made now and is shown only once; ent_ tokens: Admin → Enroll tokens)\n")
	} else {
		b.WriteString("            (the static token was shown at the first start or set by -enroll-token; or make an ent_ token: Admin → Enroll tokens)\n")
	}
	if a := h.cfg.Flows.Addr; a != "" {
		fmt.Fprintf(&b, "  Flows     NetFlow v5/v9, IPFIX and sFlow v5 to UDP %s\n", a)
	}
	if a := h.cfg.Flows.SFlowAddr; a != "" {
		fmt.Fprintf(&b, "  sFlow     UDP %s\n", a)
	}
	if a := h.cfg.Syslog.Addr; a != "" {
		fmt.Fprintf(&b, "  Syslog    RFC 3164/5424 to UDP %s\n", a)
	}
	fmt.Fprintf(&b, "  API       %s/api/docs   Metrics %s/metrics   Stop with Ctrl-C\n", url, url)
	return b.String()
}

// consoleURL is the address a person opens: -public-url when set, else
// this machine's name for the bound port (localhost when the hub listens
// on every interface or on loopback).
func (h *Hub) consoleURL() string {
	if u := strings.TrimRight(h.cfg.Server.PublicURL, "/"); u != "" {
		return u
	}
	scheme := "http"
	if h.pki != nil {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(h.ln.Addr().String())
	if err != nil {
		return scheme + "://" + h.ln.Addr().String()
	}
	if ip, err := netip.ParseAddr(host); err != nil || ip.IsUnspecified() || ip.IsLoopback() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
