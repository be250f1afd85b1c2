package config

import (
	"slices"
	"time"
)

// hubBindings binds every hub setting to its one field: the flat rows,
// then the rows of the components' blocks.
var hubBindings = slices.Concat(hubFlatBindings, blockBindings(hubBlocks, hubFlatBindings, derivedFields))

// derivedFields are set from other settings by HubConfig.Shared, so no
// setting of their own reaches them.
var derivedFields = []string{"Fleet.MultiSite", "Fleet.Archive", "Incident.Enabled", "SLA.RetentionHours",
	// API.Version is the build's version (app/api/server.go, the API
	// helper's file, keeps it in Config): TODO(lead) remove at merge once
	// api reads version.Version.
	"API.Version"}

// hubZeroOK are block fields whose 0 means something although their
// default is not 0 (validateBlocks): geo.reload_interval 0 stops
// watching the GeoIP directory.
var hubZeroOK = []string{"Geo.ReloadInterval"}

// hubBlocks are the components' YAML blocks (see block). A block is
// named after its component; where the flat table already has that key
// (capture, alerts, compliance, tls are the spec's switches) the block
// takes the package's name or says what it tunes.
var hubBlocks = []block[HubConfig]{
	{name: "store", field: "Store", ptr: func(c *HubConfig) any { return &c.Store }},
	{name: "retention", field: "Retention", ptr: func(c *HubConfig) any { return &c.Retention }},
	{name: "http", field: "HTTP", ptr: func(c *HubConfig) any { return &c.HTTP }},
	{name: "api", field: "API", ptr: func(c *HubConfig) any { return &c.API }},
	{name: "ui", field: "UI", ptr: func(c *HubConfig) any { return &c.UI }},
	{name: "auth", field: "Auth", ptr: func(c *HubConfig) any { return &c.Auth }},
	{name: "vault", field: "Vault", ptr: func(c *HubConfig) any { return &c.Vault }},
	{name: "oidc", field: "OIDC", ptr: func(c *HubConfig) any { return &c.OIDC }},
	{name: "geo", field: "Geo", ptr: func(c *HubConfig) any { return &c.Geo }},
	{name: "capture_engine", field: "Capture", ptr: func(c *HubConfig) any { return &c.Capture }},
	{name: "record", field: "Record", ptr: func(c *HubConfig) any { return &c.Record }},
	{name: "live", field: "Live", ptr: func(c *HubConfig) any { return &c.Live }},
	{name: "queue", field: "Queue", ptr: func(c *HubConfig) any { return &c.Queue }},
	{name: "flows", field: "Flows", ptr: func(c *HubConfig) any { return &c.Flows }},
	{name: "syslog", field: "Syslog", ptr: func(c *HubConfig) any { return &c.Syslog }},
	{name: "fleet", field: "Fleet", ptr: func(c *HubConfig) any { return &c.Fleet }},
	{name: "fleet", prefix: "enroll_throttle_", field: "EnrollThrottle", ptr: func(c *HubConfig) any { return &c.EnrollThrottle }},
	{name: "pki", field: "TLS", ptr: func(c *HubConfig) any { return &c.TLS }},
	{name: "alerting", field: "Alerts", ptr: func(c *HubConfig) any { return &c.Alerts }},
	{name: "incident", field: "Incident", ptr: func(c *HubConfig) any { return &c.Incident }},
	{name: "notify", field: "Notify", ptr: func(c *HubConfig) any { return &c.Notify }},
	{name: "outbound", field: "Outbound", ptr: func(c *HubConfig) any { return &c.Outbound }},
	{name: "compliance_log", field: "Compliance", ptr: func(c *HubConfig) any { return &c.Compliance }},
	{name: "devices", field: "Devices", ptr: func(c *HubConfig) any { return &c.Devices }},
	{name: "topology", field: "Topology", ptr: func(c *HubConfig) any { return &c.Topology }},
	{name: "threat", field: "Threat", ptr: func(c *HubConfig) any { return &c.Threat }},
	{name: "reports", field: "Reports", ptr: func(c *HubConfig) any { return &c.Reports }},
	{name: "sla", field: "SLA", ptr: func(c *HubConfig) any { return &c.SLA }},
	{name: "report_rollup", field: "ReportRollup", ptr: func(c *HubConfig) any { return &c.ReportRollup }},
	{name: "ai", field: "AI", ptr: func(c *HubConfig) any { return &c.AI }},
}

// hubFlatBindings binds the spec's flags and the useful few top-level
// keys, each to its one field. The flag's help is here; its default is
// the field's (DefaultHubConfig).
var hubFlatBindings = []binding[HubConfig]{
	{key: "config", flag: "config", field: "Server.File", kind: str{},
		usage: "YAML configuration file; keys are the flag names with '_' for '-' (env NETMON_CONFIG)",
		ptr:   func(c *HubConfig) any { return &c.Server.File }},
	{key: "port", flag: "port", field: "Server.Port", kind: integer{},
		usage: "HTTP port the hub listens on (env NETMON_PORT)",
		ptr:   func(c *HubConfig) any { return &c.Server.Port }},
	{key: "listen", flag: "listen", field: "Server.Listen", kind: str{},
		usage: "address to listen on, e.g. 127.0.0.1 for this machine only; empty = all interfaces (env NETMON_LISTEN)",
		ptr:   func(c *HubConfig) any { return &c.Server.Listen }},
	{key: "data_dir", flag: "data-dir", field: "Server.DataDir", kind: str{},
		usage: "directory that relative paths of files the hub keeps (-db, -vault-key-file, -record-dir, -geoip-dir, -tls-dir) are under (env NETMON_DATA_DIR)",
		ptr:   func(c *HubConfig) any { return &c.Server.DataDir }},
	{key: "dev", flag: "dev", field: "UI.Dev", kind: boolean{},
		usage: "development mode: do not serve the embedded web UI (env NETMON_DEV)",
		ptr:   func(c *HubConfig) any { return &c.UI.Dev }},
	{key: "db", flag: "db", field: "Store.DSN", kind: dsn{},
		usage: "SQLite file path, or a postgres:// DSN to use PostgreSQL (env NETMON_DB)",
		ptr:   func(c *HubConfig) any { return &c.Store.DSN }},
	{key: "db_max_conns", field: "Store.MaxConns", kind: integer{},
		ptr: func(c *HubConfig) any { return &c.Store.MaxConns }},
	{key: "retention_hours", flag: "retention-hours", field: "Retention.Hours", kind: integer{},
		usage: "hours of raw time-series data kept before the maintenance loop deletes it (env NETMON_RETENTION_HOURS)",
		ptr:   func(c *HubConfig) any { return &c.Retention.Hours }},
	{key: "alerts", flag: "alerts", field: "Alerts.Enabled", kind: boolean{},
		usage: "evaluate the alert rules (bw, port, proc, target, iface_util); off, stored events stay readable (env NETMON_ALERTS)",
		ptr:   func(c *HubConfig) any { return &c.Alerts.Enabled }},
	{key: "compliance", flag: "compliance", field: "Compliance.Enabled", kind: boolean{},
		usage: "compliance log signing: flow records, DNS queries and syslog lines hash-chained, hourly Merkle checkpoints, a daily ed25519 + RFC 3161 seal (env NETMON_COMPLIANCE)",
		ptr:   func(c *HubConfig) any { return &c.Compliance.Enabled }},
	{key: "tsa_url", flag: "tsa-url", field: "Compliance.TSAURL", kind: str{keepEmpty: true},
		usage: "RFC 3161 time-stamp service of the daily seal; empty = seal without a timestamp (env NETMON_TSA_URL)",
		ptr:   func(c *HubConfig) any { return &c.Compliance.TSAURL }},
	{key: "compliance_key", flag: "compliance-key", field: "Compliance.KeyFile", kind: str{},
		usage: "ed25519 signing key of the compliance log (PEM; generated 0600 if absent, its .pub written beside it) (env NETMON_COMPLIANCE_KEY)",
		ptr:   func(c *HubConfig) any { return &c.Compliance.KeyFile }},
	{key: "worm_dir", flag: "worm-dir", field: "Compliance.WORMDir", kind: str{keepEmpty: true},
		usage: "directory for the daily signed bundles (YYYY/MM/DD, files created once and made read-only); empty = none (env NETMON_WORM_DIR)",
		ptr:   func(c *HubConfig) any { return &c.Compliance.WORMDir }},
	{key: "mask_pii", flag: "mask-pii", field: "Compliance.MaskPII", kind: boolean{},
		usage: "mask IP, MAC and user names in evidence bundles by default (mask=false in the request shows them) (env NETMON_MASK_PII)",
		ptr:   func(c *HubConfig) any { return &c.Compliance.MaskPII }},
	{key: "compliance_retention_days", flag: "compliance-retention-days", field: "Compliance.RetentionDays", kind: integer{},
		usage: "days of raw compliance records kept; checkpoints and seals are kept (env NETMON_COMPLIANCE_RETENTION_DAYS)",
		ptr:   func(c *HubConfig) any { return &c.Compliance.RetentionDays }},
	{key: "ai.enabled", flag: "ai", field: "AI.Enabled", kind: boolean{},
		usage: "the advisory AI assistant: the AI tab and /api/v1/ai/* (env NETMON_AI__ENABLED)",
		ptr:   func(c *HubConfig) any { return &c.AI.Enabled }},
	{key: "ai.allow_cloud", flag: "ai-allow-cloud", field: "AI.AllowCloud", kind: boolean{},
		usage: "false = only providers at loopback, RFC 1918 or ULA addresses, at registration and at every connection (after DNS, redirects included) (env NETMON_AI__ALLOW_CLOUD)",
		ptr:   func(c *HubConfig) any { return &c.AI.AllowCloud }},
	{key: "ai.llm_base_url", flag: "llm-base-url", field: "AI.LLMBaseURL", kind: str{},
		usage: "bootstrap AI provider seeded once into an empty provider table, e.g. http://127.0.0.1:11434; its kind is ai.llm_kind (default compat, an OpenAI-compatible server) (env NETMON_AI__LLM_BASE_URL)",
		ptr:   func(c *HubConfig) any { return &c.AI.LLMBaseURL }},
	{key: "ai.llm_api_key", flag: "llm-api-key", field: "AI.LLMAPIKey", kind: str{},
		usage: "API key of the bootstrap provider, sealed in the vault when seeded; prefer the YAML file or env, flags show in ps (env NETMON_AI__LLM_API_KEY)",
		ptr:   func(c *HubConfig) any { return &c.AI.LLMAPIKey }},
	{key: "ai.llm_model", flag: "llm-model", field: "AI.LLMModel", kind: str{},
		usage: "default model of the bootstrap provider (env NETMON_AI__LLM_MODEL)",
		ptr:   func(c *HubConfig) any { return &c.AI.LLMModel }},
	{key: "report_timezone", flag: "report-timezone", field: "Reports.Timezone", kind: str{},
		usage: "IANA time zone reports are written in and schedules default to, e.g. Europe/Istanbul (env NETMON_REPORT_TIMEZONE)",
		ptr:   func(c *HubConfig) any { return &c.Reports.Timezone }},
	{key: "report_retention_days", flag: "report-retention-days", field: "Reports.RetentionDays", kind: integer{},
		usage: "days generated reports are kept in the archive; 0 keeps them (at most reports.max_archived either way) (env NETMON_REPORT_RETENTION_DAYS)",
		ptr:   func(c *HubConfig) any { return &c.Reports.RetentionDays }},
	{key: "prune", flag: "prune", field: "Retention.Enabled", kind: boolean{},
		usage: "run the database maintenance loop every 10 minutes; turn off on all but one hub sharing a database (env NETMON_PRUNE)",
		ptr:   func(c *HubConfig) any { return &c.Retention.Enabled }},
	{key: "log_format", flag: "log-format", field: "Server.LogFormat", kind: str{},
		usage: "log format: text or json (env NETMON_LOG_FORMAT)",
		ptr:   func(c *HubConfig) any { return &c.Server.LogFormat }},
	{key: "log_level", flag: "log-level", field: "Server.LogLevel", kind: str{},
		usage: "minimum log level: debug, info, warn or error (env NETMON_LOG_LEVEL)",
		ptr:   func(c *HubConfig) any { return &c.Server.LogLevel }},
	{key: "access_log", flag: "access-log", field: "API.AccessLog", kind: boolean{},
		usage: "log every HTTP request at INFO (method, route, status, bytes, duration, client); off, request lines are DEBUG (env NETMON_ACCESS_LOG)",
		ptr:   func(c *HubConfig) any { return &c.API.AccessLog }},
	{key: "max_conns", flag: "max-conns", field: "HTTP.MaxConns", kind: integer{},
		usage: "most HTTP connections open at once; at the cap the connection that waited longest without sending a whole request is closed; 0 = the open file limit less a quarter (env NETMON_MAX_CONNS)",
		ptr:   func(c *HubConfig) any { return &c.HTTP.MaxConns }},
	{key: "max_conns_per_source", flag: "max-conns-per-source", field: "HTTP.MaxConnsPerSource", kind: integer{},
		usage: "most HTTP connections from one address (same rule inside it); 0 = a quarter of max-conns (env NETMON_MAX_CONNS_PER_SOURCE)",
		ptr:   func(c *HubConfig) any { return &c.HTTP.MaxConnsPerSource }},

	// Access.
	{key: "auth_password", flag: "auth-password", field: "Auth.Password", kind: str{}, secret: true,
		// The spec names AUTH_PASSWORD; NETMON_AUTH_PASSWORD follows our prefix.
		env:   []string{"NETMON_AUTH_PASSWORD", "AUTH_PASSWORD"},
		usage: "legacy UI password (bootstrap admin); empty and no RBAC user = authentication OFF; prefer the env NETMON_AUTH_PASSWORD or AUTH_PASSWORD, flags show in ps",
		ptr:   func(c *HubConfig) any { return &c.Auth.Password }},
	{key: "session_store", flag: "session-store", field: "Auth.SessionStore", kind: str{keepEmpty: true},
		usage: "where sessions live: memory (one hub) or db (shared by hubs on one database; only token hashes stored) (env NETMON_SESSION_STORE)",
		ptr:   func(c *HubConfig) any { return &c.Auth.SessionStore }},
	{key: "public_url", flag: "public-url", field: "Server.PublicURL", kind: str{keepEmpty: true},
		usage: "external address of the hub, e.g. https://netmon.example; trusted origin for cookie requests and default OIDC redirect base (env NETMON_PUBLIC_URL)",
		ptr:   func(c *HubConfig) any { return &c.Server.PublicURL }},
	{key: "multi_site", flag: "multi-site", field: "Auth.MultiSite", kind: boolean{},
		usage: "make site a hard authorisation boundary; enables the site-admin and global-admin roles (env NETMON_MULTI_SITE)",
		ptr:   func(c *HubConfig) any { return &c.Auth.MultiSite }},
	{key: "metrics_token", flag: "metrics-token", field: "API.MetricsToken", kind: str{keepEmpty: true}, secret: true,
		usage: "bearer token that reads /metrics and nothing else, for a Prometheus scraper without an account (at least 16 characters); without it only admins that are not site-bound read /metrics; prefer the env NETMON_METRICS_TOKEN, flags show in ps",
		ptr:   func(c *HubConfig) any { return &c.API.MetricsToken }},
	{key: "trusted_proxies", flag: "trusted-proxies", field: "Server.TrustedProxies", kind: list{},
		usage: "comma-separated IPs or CIDRs of reverse proxies whose X-Forwarded-For is believed for the client address (env NETMON_TRUSTED_PROXIES)",
		ptr:   func(c *HubConfig) any { return &c.Server.TrustedProxies }},
	{key: "vault_key_file", flag: "vault-key-file", field: "Vault.File", kind: str{keepEmpty: true},
		usage: "credential-vault master key file (64 hex characters; generated with mode 0600 if absent) (env NETMON_VAULT_KEY_FILE)",
		ptr:   func(c *HubConfig) any { return &c.Vault.File }},
	{key: "vault_key_source", flag: "vault-key-source", field: "Vault.Source", kind: str{keepEmpty: true},
		usage: "where the vault key comes from: file, or env (NETMON_VAULT_MASTER_KEY, hex or base64; never written to disk) (env NETMON_VAULT_KEY_SOURCE)",
		ptr:   func(c *HubConfig) any { return &c.Vault.Source }},
	{key: "oidc.issuer", field: "OIDC.Issuer", kind: str{keepEmpty: true},
		ptr: func(c *HubConfig) any { return &c.OIDC.Issuer }},
	{key: "oidc.client_id", field: "OIDC.ClientID", kind: str{keepEmpty: true},
		ptr: func(c *HubConfig) any { return &c.OIDC.ClientID }},
	{key: "oidc.client_secret", field: "OIDC.ClientSecret", kind: str{keepEmpty: true}, secret: true,
		ptr: func(c *HubConfig) any { return &c.OIDC.ClientSecret }},
	{key: "oidc.redirect_url", field: "OIDC.RedirectURL", kind: str{keepEmpty: true},
		ptr: func(c *HubConfig) any { return &c.OIDC.RedirectURL }},
	{key: "oidc.group_roles", field: "OIDC.GroupRoles", kind: roleMap{},
		ptr: func(c *HubConfig) any { return &c.OIDC.GroupRoles }},
	{key: "oidc.default_role", field: "OIDC.DefaultRole", kind: str{keepEmpty: true},
		ptr: func(c *HubConfig) any { return &c.OIDC.DefaultRole }},

	// Capture, recordings, GeoIP.
	{key: "capture", flag: "capture", field: "Capture.Enabled", kind: boolean{},
		usage: "hub-local packet capture; false disables it entirely (env NETMON_CAPTURE)",
		ptr:   func(c *HubConfig) any { return &c.Capture.Enabled }},
	{key: "host_conns", flag: "host-conns", field: "Capture.HostConns", kind: boolean{},
		usage: "the hub machine's own connection inventory: GET /api/connections, the live feed's connections and agent 0 of the alert rules; false = the hub sees only what agents send (env NETMON_HOST_CONNS)",
		ptr:   func(c *HubConfig) any { return &c.Capture.HostConns }},
	{key: "record_dir", flag: "record-dir", field: "Record.Dir", kind: str{},
		usage: "directory of PCAP recordings (env NETMON_RECORD_DIR)",
		ptr:   func(c *HubConfig) any { return &c.Record.Dir }},
	{key: "record_max_mb", flag: "record-max-mb", field: "Record.MaxBytes", kind: mebibytes{},
		usage: "size in MiB of a recording file before it rotates to a new one (env NETMON_RECORD_MAX_MB)",
		ptr:   func(c *HubConfig) any { return &c.Record.MaxBytes }},
	{key: "geoip_dir", flag: "geoip-dir", field: "Geo.Dir", kind: str{},
		usage: "directory of country and ASN .mmdb databases, reloaded when they change (env NETMON_GEOIP_DIR); make geoip fills it offline",
		ptr:   func(c *HubConfig) any { return &c.Geo.Dir }},
	{key: "ioc_file", flag: "ioc-file", field: "Threat.IOCFile", kind: str{},
		usage: "threat list for the ioc rule and /api/v1/threatintel: hosts-file, ad-block (||domain^) or plain lines; parent domains match; reloaded when it changes (polled every 2 minutes) (env NETMON_IOC_FILE)",
		ptr:   func(c *HubConfig) any { return &c.Threat.IOCFile }},
	{key: "domain_category_file", flag: "domain-category-file", field: "Threat.CategoryFile", kind: str{},
		usage: "domain categories for /api/v1/enrich: one \"domain category\" per line; subdomains inherit; reloaded when it changes (env NETMON_DOMAIN_CATEGORY_FILE)",
		ptr:   func(c *HubConfig) any { return &c.Threat.CategoryFile }},
	{key: "ip_online_lookup", flag: "ip-online-lookup", field: "Geo.Online", kind: boolean{},
		usage: "when no .mmdb exists, look public addresses up online in batches (never private ones) (env NETMON_IP_ONLINE_LOOKUP)",
		ptr:   func(c *HubConfig) any { return &c.Geo.Online }},
	{key: "outbound_allow", flag: "outbound-allow", field: "Outbound.Allow", kind: cidrList{},
		usage: "CIDR,... ranges outbound connections (webhooks, chat, SMTP, SIEM, tickets, online GeoIP) may reach although private, loopback or link-local; cloud metadata addresses stay refused (env NETMON_OUTBOUND_ALLOW)",
		ptr:   func(c *HubConfig) any { return &c.Outbound.Allow }},
	{key: "messenger_base_url", field: "Notify.MessengerBaseURL", kind: str{keepEmpty: true},
		ptr: func(c *HubConfig) any { return &c.Notify.MessengerBaseURL }},
	{key: "ip_online_url", field: "Geo.OnlineURL", kind: str{keepEmpty: true},
		ptr: func(c *HubConfig) any { return &c.Geo.OnlineURL }},

	// Collectors and the ingest queue.
	{key: "flow_port", flag: "flow-port", field: "Flows.Addr", kind: udpPort{},
		usage: "UDP port for NetFlow v5/v9, IPFIX and sFlow v5 together, e.g. 2055; 0 = off (env NETMON_FLOW_PORT)",
		ptr:   func(c *HubConfig) any { return &c.Flows.Addr }},
	{key: "sflow_port", flag: "sflow-port", field: "Flows.SFlowAddr", kind: udpPort{},
		usage: "separate UDP port for sFlow v5, e.g. 6343; 0 = none (env NETMON_SFLOW_PORT)",
		ptr:   func(c *HubConfig) any { return &c.Flows.SFlowAddr }},
	{key: "syslog_port", flag: "syslog-port", field: "Syslog.Addr", kind: udpPort{},
		usage: "UDP port for syslog (RFC 3164, also 5424), e.g. 5514; 0 = off (env NETMON_SYSLOG_PORT)",
		ptr:   func(c *HubConfig) any { return &c.Syslog.Addr }},
	{key: "poller", flag: "poller", field: "Devices.Enabled", kind: boolean{},
		usage: "poll the configured network devices (SNMP and firewall REST); run it on one hub replica only (env NETMON_POLLER)",
		ptr:   func(c *HubConfig) any { return &c.Devices.Enabled }},
	{key: "devpoll_concurrency", flag: "devpoll-concurrency", field: "Devices.Concurrency", kind: integer{},
		usage: "most device polls at once (env NETMON_DEVPOLL_CONCURRENCY)",
		ptr:   func(c *HubConfig) any { return &c.Devices.Concurrency }},
	{key: "queue_workers", flag: "queue-workers", field: "Queue.Workers", kind: integer{},
		usage: "parallel writers of the ingest queue (env NETMON_QUEUE_WORKERS)",
		ptr:   func(c *HubConfig) any { return &c.Queue.Workers }},
	{key: "flow_minute_rows", flag: "flow-minute-rows", field: "Queue.Flows.MinuteRows", kind: integer{},
		usage: "5-tuples of an exporter's minute the flow store keeps in detail, the rest summed into counted other rows; 1-100000 (env NETMON_FLOW_MINUTE_ROWS)",
		ptr:   func(c *HubConfig) any { return &c.Queue.Flows.MinuteRows }},
	{key: "flow_hour_rows", flag: "flow-hour-rows", field: "Queue.HourRows", kind: integer{},
		usage: "5-tuples of an exporter's hour the flow store keeps in detail when it rolls minutes up; 1-1000000 (env NETMON_FLOW_HOUR_ROWS)",
		ptr:   func(c *HubConfig) any { return &c.Queue.HourRows }},

	// Fleet and TLS.
	{key: "enroll_token", flag: "enroll-token", field: "Fleet.StaticToken", kind: str{}, secret: true,
		usage: "static agent enrollment secret (X-Enroll-Token); empty = a random one, logged once at start (env NETMON_ENROLL_TOKEN)",
		ptr:   func(c *HubConfig) any { return &c.Fleet.StaticToken }},
	{key: "agent_archive_days", flag: "agent-archive-days", field: "Fleet.ArchiveDays", kind: integer{},
		usage: "delete agents offline this many days, with all their data; 0 = never (env NETMON_AGENT_ARCHIVE_DAYS)",
		ptr:   func(c *HubConfig) any { return &c.Fleet.ArchiveDays }},
	{key: "agent_pcap", flag: "agent-pcap", field: "Fleet.PcapEnabled", kind: boolean{},
		usage: "fleet policy for agent deep collection and raw PCAP; false disables it fleet-wide (env NETMON_AGENT_PCAP)",
		ptr:   func(c *HubConfig) any { return &c.Fleet.PcapEnabled }},
	{key: "agent_interval", flag: "agent-interval", field: "Fleet.Interval", kind: seconds{},
		usage: "telemetry interval in seconds that agents are told to use, 1-3600 (env NETMON_AGENT_INTERVAL)",
		ptr:   func(c *HubConfig) any { return &c.Fleet.Interval }},
	{key: "tls", flag: "tls", field: "TLS.Enabled", kind: boolean{},
		usage: "serve HTTPS and agent mTLS; the hub creates its own CA in -tls-dir (env NETMON_TLS)",
		ptr:   func(c *HubConfig) any { return &c.TLS.Enabled }},
	{key: "tls_dir", flag: "tls-dir", field: "TLS.Dir", kind: str{},
		usage: "directory of the hub CA and generated server certificate (env NETMON_TLS_DIR)",
		ptr:   func(c *HubConfig) any { return &c.TLS.Dir }},
	{key: "tls_hosts", flag: "tls-hosts", field: "TLS.Hosts", kind: list{},
		usage: "host names and IPs of the generated server certificate, comma-separated (default localhost, 127.0.0.1, ::1 and the host name; env NETMON_TLS_HOSTS)",
		ptr:   func(c *HubConfig) any { return &c.TLS.Hosts }},
	{key: "tls_cert", flag: "tls-cert", field: "TLS.CertFile", kind: str{},
		usage: "operator's server certificate (PEM) instead of the generated one; needs -tls-key (env NETMON_TLS_CERT)",
		ptr:   func(c *HubConfig) any { return &c.TLS.CertFile }},
	{key: "tls_key", flag: "tls-key", field: "TLS.KeyFile", kind: str{},
		usage: "private key (PEM) of -tls-cert (env NETMON_TLS_KEY)",
		ptr:   func(c *HubConfig) any { return &c.TLS.KeyFile }},
}

// hubKeys are the keys a hub configuration file may hold (blocks as
// "oidc.issuer"). A file with any other key is refused, so a typo is an
// error rather than a silent default.
func hubKeys() []string {
	var keys []string
	for _, b := range hubBindings {
		if b.key != "config" {
			keys = append(keys, b.key)
		}
	}
	return keys
}

// secondsOf is d in whole seconds, for messages.
func secondsOf(d time.Duration) int { return int(d / time.Second) }
