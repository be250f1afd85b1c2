// Package config composes the components' own Config structs into the
// hub's and the agent's configuration and binds flags, environment
// variables and an optional YAML file onto their fields. Precedence,
// highest first: flags set on the command line, environment variables
// (NETMON_<KEY>), the YAML file given by --config, the components'
// DefaultConfig().
//
// A setting is declared once, in its component's config.go (a Config
// field with its comment, its default in DefaultConfig). This package
// only adds, per setting, one binding row (hubBindings in hubkeys.go,
// agentBindings in agent.go, adminBindings in admin.go): the key, its
// flag and help, and a pointer to the field; bind.go has the machinery,
// validate.go the checks, print.go `netmon config print`. Every key has
// one name in three spellings: the flag `retention-hours`, the YAML key
// `retention_hours` and the variable NETMON_RETENTION_HOURS. A local
// *viper.Viper does the merging (never viper's package singleton), and
// the typed getters refuse values that do not parse instead of silently
// turning them into zero.
package config

import (
	"fmt"
	"net"
	"net/url"
	"netmon/alerting"
	"netmon/alerting/incident"
	"netmon/alerting/notify"
	"netmon/app/ai"
	"netmon/app/compliance"
	"netmon/app/reports"
	"netmon/store/queue/natsq"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"netmon/app/api"
	"netmon/app/auth"
	"netmon/app/auth/oidc"
	"netmon/app/fleet"
	"netmon/app/fleet/pki"
	"netmon/app/httpguard"
	"netmon/app/live"
	"netmon/app/netguard"
	"netmon/app/topology"
	"netmon/capture"
	"netmon/capture/pcaprec"
	"netmon/collectors/devices"
	"netmon/collectors/flows"
	"netmon/collectors/geo"
	"netmon/collectors/geo/threat"
	"netmon/collectors/syslog"
	"netmon/store"
	"netmon/store/queue"
	"netmon/store/vault"
	"netmon/ui"
)

// EnvPrefix is the prefix of every environment variable netmon reads.
const EnvPrefix = "NETMON"

// HubConfig is the hub's configuration (spec section 1, "Runtime
// configuration"): each component's own Config, plus Server for what
// belongs to no component. app/hub hands each field to its component as
// is. A new component adds its Config here and its rows to hubBindings.
type HubConfig struct {
	// Server is the process: address, data directory, logging, the file.
	Server Server
	// Store is the database (-db, NETMON_DB_MAX_CONNS).
	Store store.Config
	// Retention purges raw time series (-retention-hours, -prune).
	Retention store.RetentionConfig
	// HTTP caps connections (-max-conns, -max-conns-per-source).
	HTTP httpguard.Config
	// API is the HTTP API (-metrics-token).
	API api.Config
	// UI is the embedded console (-dev).
	UI ui.Config
	// Auth is authentication (-auth-password, -session-store, -multi-site).
	Auth auth.Config
	// Vault is the credential vault's key (-vault-key-file, -vault-key-source).
	Vault vault.Config
	// OIDC is single sign-on (YAML block oidc).
	OIDC oidc.Config
	// Geo is GeoIP (-geoip-dir, -ip-online-lookup, ip_online_url).
	Geo geo.Config
	// Capture is the hub-local capture (-capture).
	Capture capture.Config
	// Record is the PCAP recorder (-record-dir, -record-max-mb).
	Record pcaprec.Config
	// Live is the WebSocket feed (no flag; origins derive from the address).
	Live live.Config
	// Queue is the ingest queue (-queue-workers).
	Queue queue.Config
	// Flows is the flow collector (-flow-port, -sflow-port).
	Flows flows.Config
	// Syslog is the syslog receiver (-syslog-port).
	Syslog syslog.Config
	// Fleet is the agents' side (-enroll-token, -agent-*).
	Fleet fleet.Config
	// EnrollThrottle is enrollment's failure throttle (spec 5.11: the
	// login policy, its own counts; YAML fleet.enroll_throttle_*).
	EnrollThrottle auth.ThrottleConfig
	// TLS is the hub's CA and HTTPS (-tls, -tls-dir, -tls-hosts, -tls-cert, -tls-key).
	TLS pki.Config
	// Alerts is the alert engine (-alerts).
	Alerts alerting.Config
	// Incident is the incident correlation (runs with -alerts; YAML
	// block incident).
	Incident incident.Config
	// Notify is alert delivery's tuning (queue, retries; YAML only).
	Notify notify.Config
	// Outbound is the guard of every outbound connection (-outbound-allow).
	Outbound netguard.Config
	// Compliance is the compliance log (-compliance, -tsa-url,
	// -compliance-key, -worm-dir, -mask-pii, -compliance-retention-days).
	Compliance compliance.Config
	// Devices is the device component: the registry and the one poller
	// of SNMP and firewall REST devices (-poller, -devpoll-concurrency;
	// YAML block "devices", its drivers' tuning there as snmp_* and
	// firewall_*).
	Devices devices.Config
	// Threat is the threat list and the domain categories (-ioc-file,
	// -domain-category-file).
	Threat threat.Config
	// Topology is the network graph's edge expiry (YAML block topology).
	Topology topology.Config
	// Reports is the reports service: schedules, archive, the report
	// zone (-report-timezone, -report-retention-days; YAML block reports).
	Reports reports.Config
	// NATS is the JetStream ingest queue (-nats and its credentials; YAML
	// block nats); no URL: the in-process queue alone.
	NATS natsq.Config
	// AI is the advisory assistant (-ai, -ai-allow-cloud, -llm-*; YAML
	// block ai with ai.nightly and ai.triage).
	AI ai.Config
	// ReportRollup is the daily pre-aggregation reports read (YAML block
	// report_rollup).
	ReportRollup reports.RollupConfig
	// SLA is the SLA targets' evaluation (YAML block sla); its
	// RetentionHours follows -retention-hours.
	SLA reports.SLAConfig
}

// Server holds the settings of the hub process itself, which belong to
// no component.
type Server struct {
	// Port is the HTTP port the hub listens on (0 picks a free one: tests).
	Port int
	// Listen is the address the hub listens on ("" = all interfaces, the
	// spec's default; 127.0.0.1 keeps it on this machine).
	Listen string
	// DataDir is where relative file paths (the SQLite database, the vault
	// key, recordings, GeoIP databases, TLS files) are resolved;
	// ResolvePaths makes them absolute against it.
	DataDir string
	// PublicURL is the hub's external address, e.g. https://netmon.example:
	// the trusted origin of cookie requests and the live feed, and the
	// default base of the OIDC redirect.
	PublicURL string
	// TrustedProxies are the addresses (IPs or CIDRs) whose
	// X-Forwarded-For / X-Real-IP is believed; empty = the direct peer is
	// the client, always.
	TrustedProxies []string
	// LogFormat is "text" or "json".
	LogFormat string
	// LogLevel is "debug", "info", "warn" or "error".
	LogLevel string
	// File is the YAML file the configuration was read from, if any.
	File string
}

// DefaultHubConfig returns the defaults of spec section 1: every
// component's DefaultConfig.
func DefaultHubConfig() HubConfig {
	return HubConfig{
		Server:    Server{Port: 8080, DataDir: ".", LogFormat: "text", LogLevel: "info"},
		Store:     store.DefaultConfig(),
		Retention: store.DefaultRetentionConfig(),
		HTTP:      httpguard.DefaultConfig(),
		API:       api.DefaultConfig(),
		Auth:      auth.DefaultConfig(),
		Vault:     vault.DefaultConfig(),
		OIDC:      oidc.DefaultConfig(),
		Geo:       geo.DefaultConfig(),
		Outbound:  netguard.DefaultConfig(),
		Notify:    notify.DefaultConfig(),
		Capture:   capture.DefaultConfig(),
		Record:    pcaprec.DefaultConfig(),
		Live:      live.DefaultConfig(),
		Queue:     queue.DefaultConfig(),
		Flows:     flows.DefaultConfig(),
		Syslog:    syslog.DefaultConfig(),
		Fleet:     fleet.DefaultConfig(),
		// Failures only: a site rolling out many agents behind one NAT
		// address enrolls them in parallel (auth.ThrottleConfig).
		EnrollThrottle: enrollThrottle(),
		Incident:       incident.DefaultConfig(),
		Topology:       topology.DefaultConfig(),
		TLS:            pki.DefaultConfig(),
		Alerts:         alerting.DefaultConfig(),
		Compliance:     compliance.DefaultConfig(),
		Reports:        reports.DefaultConfig(),
		AI:             ai.DefaultConfig(),
		NATS:           natsq.DefaultConfig(),
		SLA:            reports.DefaultSLAConfig(),
		ReportRollup:   reports.DefaultRollupConfig(),
		Devices:        devices.DefaultConfig(),
		Threat:         threat.DefaultConfig(),
	}
}

// enrollThrottle is the login policy counting finished failures only.
func enrollThrottle() auth.ThrottleConfig {
	t := auth.DefaultThrottleConfig()
	t.FailuresOnly = true
	return t
}

// AddHubFlags declares the hub's flags on fs with their defaults (the
// components') and help. Only flags whose feature exists are declared: a
// flag that does nothing is worse than a missing one.
func AddHubFlags(fs *pflag.FlagSet) {
	declare(fs, hubBindings, DefaultHubConfig())
}

// LoadHub merges fs (already parsed), the process environment and the YAML
// file named by --config / NETMON_CONFIG, then validates the result.
func LoadHub(fs *pflag.FlagSet) (HubConfig, error) {
	c, _, err := LoadHubSettings(fs)
	return c, err
}

// LoadHubSettings is LoadHub that also returns every effective setting
// with its source, for `netmon config print`.
func LoadHubSettings(fs *pflag.FlagSet) (HubConfig, []Setting, error) {
	c := DefaultHubConfig()
	l, err := newLoader(fs, func(v *viper.Viper, file string) (map[string]any, error) {
		return readFile(v, file, hubKeys())
	})
	if err != nil {
		return HubConfig{}, nil, err
	}
	settings, err := apply(l, hubBindings, &c)
	if err != nil {
		return HubConfig{}, nil, err
	}
	c.ListenUDPOnListen()
	return c, settings, c.Validate()
}

// ListenUDPOnListen binds the UDP listeners (-flow-port, -sflow-port,
// -syslog-port) to -listen's address when one is given: an operator who
// keeps the hub on 127.0.0.1 expects its collectors there too, not on
// every interface.
func (c *HubConfig) ListenUDPOnListen() {
	if c.Server.Listen == "" {
		return
	}
	for _, a := range []*string{&c.Flows.Addr, &c.Flows.SFlowAddr, &c.Syslog.Addr} {
		if strings.HasPrefix(*a, ":") {
			*a = net.JoinHostPort(c.Server.Listen, (*a)[1:])
		}
	}
}

// newLoader binds --config and reads the file it names (with read, which
// checks its keys).
func newLoader(fs *pflag.FlagSet, read func(*viper.Viper, string) (map[string]any, error)) (*loader, error) {
	l := &loader{v: newViper(), fs: fs}
	if f := fs.Lookup("config"); f != nil {
		if err := l.v.BindPFlag("config", f); err != nil {
			return nil, fmt.Errorf("bind flag config: %w", err)
		}
	}
	file, err := getString(l.v, "config")
	if err != nil {
		return nil, err
	}
	if file != "" {
		top, err := read(l.v, file)
		if err != nil {
			return nil, err
		}
		l.file, l.inFile = file, fileKeys(top)
	}
	return l, nil
}

// Shared returns c with the values one setting gives several components:
// -multi-site (auth) rules enrollment too, -prune (retention) runs the
// agent archive too, -alerts runs the incident correlation too,
// -retention-hours bounds how far back SLA uptime is measured,
// -queue-workers sets the NATS consumers' writers too, and the OIDC
// redirect defaults to the public URL's.
// app/hub calls it before building; the settings themselves stay bound to
// one field each.
func (c HubConfig) Shared() HubConfig {
	c.Fleet.MultiSite = c.Auth.MultiSite
	c.Fleet.Archive = c.Retention.Enabled
	c.Incident.Enabled = c.Alerts.Enabled
	c.SLA.RetentionHours = c.Retention.Hours
	c.NATS.Workers = c.Queue.Workers
	if c.OIDC.RedirectURL == "" {
		c.OIDC.RedirectURL = strings.TrimRight(c.Server.PublicURL, "/") + "/api/auth/oidc/callback"
	}
	return c
}

// ResolvePaths makes the hub's relative file paths absolute under
// DataDir, so that a hub started from another directory finds its files
// (instead of quietly making a new empty database and vault key there)
// and logs where they are. `netmon hub` calls it after LoadHub.
func (c *HubConfig) ResolvePaths() error {
	dir := c.Server.DataDir
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("data-dir %q: %w", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return fmt.Errorf("data-dir %s: not a directory", abs)
	}
	c.Server.DataDir = abs
	under := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(abs, *p)
		}
	}
	if !strings.Contains(c.Store.DSN, "://") {
		under(&c.Store.DSN)
	}
	under(&c.Vault.File)
	under(&c.Record.Dir)
	under(&c.Geo.Dir)
	under(&c.Threat.IOCFile)
	under(&c.Threat.CategoryFile)
	under(&c.TLS.Dir)
	under(&c.TLS.CertFile)
	under(&c.TLS.KeyFile)
	under(&c.Compliance.KeyFile)
	under(&c.Compliance.WORMDir)
	return nil
}

// newViper returns a local viper that reads NETMON_* variables.
func newViper() *viper.Viper {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	// oidc.client_secret <-> NETMON_OIDC__CLIENT_SECRET, as the spec maps ai.* to NETMON_AI__*.
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "__"))
	v.AutomaticEnv()
	return v
}

// readFile loads a YAML file into v after checking its keys against
// known (top-level keys, and "block.key" for the keys of a block).
func readFile(v *viper.Viper, file string, known []string) (map[string]any, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	var top map[string]any
	if err := yamlUnmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	var roots []string
	blocks := map[string][]string{}
	for _, k := range known {
		root, sub, isBlock := strings.Cut(k, ".")
		if !containsKey(roots, root) {
			roots = append(roots, root)
		}
		if isBlock {
			blocks[root] = append(blocks[root], sub)
		}
	}
	for k, val := range top {
		if !containsKey(roots, k) {
			return nil, fmt.Errorf("config file %s: unknown key %q%s (known keys: %s)", file, k, DidYouMean(k, roots), strings.Join(roots, ", "))
		}
		if sub, ok := blocks[k]; ok {
			m, isMap := val.(map[string]any)
			if !isMap && val != nil {
				return nil, fmt.Errorf("config file %s: %s must be a mapping", file, k)
			}
			for sk := range m {
				if !containsKey(sub, sk) {
					return nil, fmt.Errorf("config file %s: unknown key %q in %s%s (known keys: %s)", file, sk, k, DidYouMean(sk, sub), strings.Join(sub, ", "))
				}
			}
		}
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(strings.NewReader(string(raw))); err != nil {
		return nil, fmt.Errorf("config file %s: %w", file, err)
	}
	return top, nil
}

// publicURLValid reports whether s is an absolute http(s) URL without
// query or fragment.
func publicURLValid(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.RawQuery == "" && u.Fragment == ""
}
