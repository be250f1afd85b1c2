package config

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"netmon/app/logging"
)

// Validate checks ranges and enumerations of every component's settings
// and names the offending key as the user spells it.
func (c HubConfig) Validate() error {
	def := DefaultHubConfig()
	blocks := func() error { return validateBlocks(hubBindings, &c, &def, hubZeroOK) }
	for _, check := range []func() error{c.validateServer, c.validateAccess, c.validateCapture, c.validateCollectors, c.validateFleet, blocks} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c HubConfig) validateServer() error {
	s := c.Server
	switch {
	case s.Port < 1 || s.Port > 65535:
		return fmt.Errorf("port %d: must be between 1 and 65535", s.Port)
	case s.Listen != "" && net.ParseIP(strings.Trim(s.Listen, "[]")) == nil && s.Listen != "localhost":
		return fmt.Errorf("listen %q: want an IP address of this machine (or empty for all interfaces)", s.Listen)
	case strings.TrimSpace(c.Store.DSN) == "":
		return fmt.Errorf("db: must not be empty")
	case c.Store.MaxConns < 1 || c.Store.MaxConns > 1000:
		return fmt.Errorf("db_max_conns %d (NETMON_DB_MAX_CONNS): must be between 1 and 1000", c.Store.MaxConns)
	case c.Retention.Hours < 1:
		return fmt.Errorf("retention-hours %d: must be at least 1", c.Retention.Hours)
	case !validZone(c.Reports.Timezone):
		return fmt.Errorf("report-timezone %q: want an IANA time zone such as UTC or Europe/Istanbul", c.Reports.Timezone)
	case c.HTTP.MaxConns < 0 || c.HTTP.MaxConns == 1:
		return fmt.Errorf("max-conns %d: must be at least 2 (0 = derived from the open file limit)", c.HTTP.MaxConns)
	case c.HTTP.MaxConnsPerSource < 0:
		return fmt.Errorf("max-conns-per-source %d: must be at least 1 (0 = a quarter of max-conns)", c.HTTP.MaxConnsPerSource)
	}
	_, err := logging.New(nopWriter{}, s.LogFormat, s.LogLevel)
	return err
}

func (c HubConfig) validateAccess() error {
	switch c.Auth.SessionStore {
	case "memory", "db":
	default:
		return fmt.Errorf("session-store %q: want memory or db", c.Auth.SessionStore)
	}
	switch c.Vault.Source {
	case "file", "env":
	default:
		return fmt.Errorf("vault-key-source %q: want file or env", c.Vault.Source)
	}
	if c.Vault.Source == "file" && strings.TrimSpace(c.Vault.File) == "" {
		return fmt.Errorf("vault-key-file: must not be empty")
	}
	if c.Server.PublicURL != "" && !publicURLValid(c.Server.PublicURL) {
		return fmt.Errorf("public-url %q: want an absolute http(s) URL such as https://netmon.example", c.Server.PublicURL)
	}
	if _, err := ParseProxies(c.Server.TrustedProxies); err != nil {
		return err
	}
	// A short scrape token would be guessed: it is compared, not
	// throttled like a login.
	if t := c.API.MetricsToken; t != "" && (len(t) < 16 || strings.TrimSpace(t) != t) {
		return fmt.Errorf("metrics-token: must be at least 16 characters, without surrounding spaces")
	}
	if c.OIDC.Issuer != "" {
		if c.OIDC.ClientID == "" {
			return fmt.Errorf("oidc.client_id: required when oidc.issuer is set")
		}
		if c.OIDC.RedirectURL == "" && c.Server.PublicURL == "" {
			return fmt.Errorf("oidc.redirect_url: required when -public-url is not set")
		}
	}
	return nil
}

func (c HubConfig) validateCapture() error {
	mb := c.Record.MaxBytes >> 20
	switch {
	case strings.TrimSpace(c.Record.Dir) == "":
		return fmt.Errorf("record-dir: must not be empty")
	case mb < 1 || mb > 1<<20:
		return fmt.Errorf("record-max-mb %d: must be between 1 and 1048576", mb)
	case c.Geo.OnlineURL != "" && !strings.HasPrefix(c.Geo.OnlineURL, "http://") && !strings.HasPrefix(c.Geo.OnlineURL, "https://"):
		return fmt.Errorf("ip_online_url %q: want an http(s) URL", c.Geo.OnlineURL)
	}
	return nil
}

func (c HubConfig) validateCollectors() error {
	if c.Flows.Addr != "" && c.Flows.Addr == c.Flows.SFlowAddr {
		return fmt.Errorf("sflow-port %d: the flow port already receives sFlow; use another port or none", portOf(c.Flows.SFlowAddr))
	}
	if c.Queue.Workers < 1 || c.Queue.Workers > 256 {
		return fmt.Errorf("queue-workers %d: must be between 1 and 256", c.Queue.Workers)
	}
	// Past these a minute's or an hour's write would grow without the
	// bound the store's cost depends on (issue 16).
	if r := c.Queue.Flows.MinuteRows; r < 1 || r > 100000 {
		return fmt.Errorf("flow-minute-rows %d: must be between 1 and 100000", r)
	}
	if r := c.Queue.HourRows; r < 1 || r > 1000000 {
		return fmt.Errorf("flow-hour-rows %d: must be between 1 and 1000000", r)
	}
	return nil
}

func (c HubConfig) validateFleet() error {
	f, tok := c.Fleet, c.Fleet.StaticToken
	switch {
	case tok != "" && strings.TrimSpace(tok) == "":
		return fmt.Errorf("enroll-token: must not be only whitespace (leave it unset for a random token)")
	case tok != "" && len(strings.TrimSpace(tok)) < 16:
		return fmt.Errorf("enroll-token: must be at least 16 characters (leave it unset for a random token)")
	case strings.HasPrefix(strings.TrimSpace(tok), "ent_"):
		return fmt.Errorf("enroll-token: must not start with ent_ (that prefix marks database enroll tokens)")
	case f.ArchiveDays < 0:
		return fmt.Errorf("agent-archive-days %d: must be 0 (never) or more", f.ArchiveDays)
	case secondsOf(f.Interval) < 1 || secondsOf(f.Interval) > 3600:
		return fmt.Errorf("agent-interval %d: must be between 1 and 3600 seconds", secondsOf(f.Interval))
	case (c.TLS.CertFile == "") != (c.TLS.KeyFile == ""):
		return fmt.Errorf("tls-cert and tls-key: give both or neither")
	case c.TLS.Enabled && strings.TrimSpace(c.TLS.Dir) == "":
		return fmt.Errorf("tls-dir: must not be empty with -tls")
	}
	return nil
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// ParseProxies parses trusted proxy addresses and prefixes.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted-proxies: %q is not an IP address or CIDR", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// validZone reports whether name is a time zone this machine knows.
func validZone(name string) bool {
	if name == "" {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}
