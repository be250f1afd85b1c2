package alerting

import (
	"bytes"
	"encoding/json"

	"netmon/app/errs"
)

// Settings is the alert configuration of spec 2.5, as GET and PUT
// /api/alerts carry it. It is the operator's document, kept in the
// database; Config (config.go) is the engine's start-up tuning.
//
// sla_breach has no settings here: its targets are the SLA targets of
// app/reports (/api/v1/sla/targets), which raise it through Raise.
type Settings struct {
	// Enabled turns every rule on or off at once.
	Enabled bool `json:"enabled"`
	// CooldownMin is the minimum time between two stored events of the
	// same kind|key (default 10; spec section 8).
	CooldownMin int `json:"cooldown_min" jsonschema:"minimum=0"`
	// Bandwidth is the bw rule.
	Bandwidth BandwidthRule `json:"bandwidth"`
	// Ports is the port rule.
	Ports PortsRule `json:"ports"`
	// NewProc is the proc rule.
	NewProc NewProcRule `json:"new_proc"`
	// NewTarget is the target rule.
	NewTarget NewTargetRule `json:"new_target"`
	// Anomaly is the seasonal baseline rule (alerting/anomaly; every minute).
	Anomaly AnomalyRule `json:"anomaly"`
	// IOC is the threat-list rule (-ioc-file; about every 30 s).
	IOC IOCRule `json:"ioc"`
	// Iface is the iface_util rule.
	Iface IfaceRule `json:"iface"`
	// FWVendor holds the firewall-device rules (vpn_down, sdwan_sla_breach,
	// high_sessions; rules/firewall.go), judged on each REST device's
	// latest poll every inventory cycle.
	FWVendor FWVendorRule `json:"fwvendor"`
	// AutoResolveMin resolves a firing or acknowledged event whose
	// condition has not repeated for this many minutes (0 = never).
	AutoResolveMin int `json:"auto_resolve_min" jsonschema:"minimum=0"`
	// CorrelateWindowSec is the incident correlation window (kept for the
	// correlation engine).
	CorrelateWindowSec int `json:"correlate_window_sec" jsonschema:"minimum=0"`
	// Notifiers are the delivery channels (delivery is the next issue).
	Notifiers Notifiers `json:"notifiers"`
}

// BandwidthRule fires when the capture's rate stays over a threshold.
type BandwidthRule struct {
	Enabled bool    `json:"enabled"`
	InMbps  float64 `json:"in_mbps" jsonschema:"minimum=0"`
	OutMbps float64 `json:"out_mbps" jsonschema:"minimum=0"`
	Seconds int     `json:"seconds" jsonschema:"minimum=0"`
}

// PortsRule fires on an established connection to a listed remote port.
type PortsRule struct {
	Enabled bool  `json:"enabled"`
	Ports   []int `json:"ports"`
}

// NewProcRule fires on a process never seen on an agent before.
type NewProcRule struct {
	Enabled bool     `json:"enabled"`
	Ignore  []string `json:"ignore"`
}

// NewTargetRule fires when a remote address first reaches MinTotalMB.
type NewTargetRule struct {
	Enabled    bool    `json:"enabled"`
	MinTotalMB float64 `json:"min_total_mb" jsonschema:"minimum=0"`
}

// AnomalyRule is the seasonal baseline rule.
type AnomalyRule struct {
	Enabled     bool    `json:"enabled"`
	Sensitivity float64 `json:"sensitivity" jsonschema:"exclusiveMinimum=0"`
	MinSamples  int     `json:"min_samples" jsonschema:"minimum=1"`
	WindowMin   int     `json:"window_min" jsonschema:"minimum=1"`
	// CritZ is the z-score from which an anomaly is crit (0 = never).
	CritZ float64 `json:"crit_z" jsonschema:"minimum=0"`
}

// IOCRule is the threat-list rule.
type IOCRule struct {
	Enabled bool `json:"enabled"`
}

// IfaceRule is the interface utilisation rule.
type IfaceRule struct {
	WarnPct    float64 `json:"warn_pct" jsonschema:"minimum=0"`
	CritPct    float64 `json:"crit_pct" jsonschema:"minimum=0"`
	SustainSec int     `json:"sustain_sec" jsonschema:"minimum=0"`
}

// FWVendorRule holds the firewall-device thresholds.
type FWVendorRule struct {
	VPNDown        bool    `json:"vpn_down"`
	SDWANLatencyMS float64 `json:"sdwan_latency_ms"`
	SDWANJitterMS  float64 `json:"sdwan_jitter_ms"`
	SDWANLossPct   float64 `json:"sdwan_loss_pct"`
	MaxSessions    int     `json:"max_sessions"`
}

// Notifiers are the delivery channels of spec 2.5.
type Notifiers struct {
	Desktop         bool     `json:"desktop"`
	GenericURL      string   `json:"generic_url"`
	Chatapp1URL     string   `json:"chatapp1_url"`
	Chatapp2URL     string   `json:"chatapp2_url"`
	MessengerToken  string   `json:"messenger_token"`
	MessengerChatID string   `json:"messenger_chat_id"`
	TeamchatURL     string   `json:"teamchat_url"`
	WebhookV2URL    string   `json:"webhook_v2_url"`
	WebhookV2Secret string   `json:"webhook_v2_secret"`
	EmailHost       string   `json:"email_host"`
	EmailPort       int      `json:"email_port" jsonschema:"description=0 means 587"`
	EmailFrom       string   `json:"email_from"`
	EmailTo         []string `json:"email_to"`
	EmailUser       string   `json:"email_user"`
	EmailPass       string   `json:"email_pass"`
	SIEM            SIEM     `json:"siem"`
	// TicketURL is the ITSM webhook a ticket is opened and closed at
	// (alerting/notify, README "Alert delivery"); TicketToken is sent as
	// a bearer token. Both are secrets.
	TicketURL   string `json:"ticket_url"`
	TicketToken string `json:"ticket_token"`
}

// SIEM is the SIEM forwarder of spec 2.5.
type SIEM struct {
	Enabled   bool   `json:"enabled"`
	Format    string `json:"format" jsonschema:"enum=,enum=cef,enum=leef,enum=json,enum=text"`
	Transport string `json:"transport" jsonschema:"enum=,enum=syslog-udp,enum=syslog-tcp,enum=http"`
	// Target is host:port (syslog) or a URL (http). A URL may carry a
	// credential in its query or userinfo: it is a secret (secrets.go),
	// masked on read, while a syslog host:port shows in clear.
	Target   string `json:"target"`
	Token    string `json:"token"`
	Insecure bool   `json:"insecure"`
	// Framing of syslog-tcp: octet (RFC 6587 octet counting, default) or
	// newline.
	Framing string `json:"framing" jsonschema:"enum=,enum=octet,enum=newline"`
}

// DefaultSettings are the settings of a hub nobody configured: alerting
// on, the spec's defaults, every rule off until set.
func DefaultSettings() Settings {
	return Settings{
		Enabled:     true,
		CooldownMin: 10,
		Bandwidth:   BandwidthRule{InMbps: 100, OutMbps: 100, Seconds: 10},
		Ports:       PortsRule{Ports: []int{}},
		NewProc:     NewProcRule{Ignore: []string{}},
		NewTarget:   NewTargetRule{MinTotalMB: 100},
		Anomaly:     DefaultAnomaly(),
		Iface:       IfaceRule{WarnPct: 70, CritPct: 90, SustainSec: 300},
		Notifiers:   Notifiers{EmailTo: []string{}},
	}
}

// DefaultAnomaly is the anomaly section of spec 8: sensitivity 3.0, 120
// samples, a 5-minute window.
func DefaultAnomaly() AnomalyRule {
	return AnomalyRule{Sensitivity: 3.0, MinSamples: 120, WindowMin: 5}
}

// Merge applies a partial document to s: sections and fields present in
// doc replace s's, the rest stays (spec 4.4: partial sections accepted).
func (s Settings) Merge(doc []byte) (Settings, error) {
	out := s.clone()
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&out); err != nil {
		return s, errs.Invalidf("alert configuration: %v", err)
	}
	return out, nil
}

// ParseStored reads a stored document over the defaults, so a config
// saved before a section existed (anomaly, above all) gets its defaults.
func ParseStored(doc []byte) (Settings, error) {
	s := DefaultSettings()
	if err := json.Unmarshal(doc, &s); err != nil {
		return DefaultSettings(), err
	}
	if s.Anomaly == (AnomalyRule{}) {
		s.Anomaly = DefaultAnomaly()
	}
	return s, nil
}

// Validate refuses values the engine cannot use, naming the field.
func (s Settings) Validate() error {
	switch {
	case s.CooldownMin < 0:
		return errs.InvalidField("cooldown_min", "must not be negative")
	case s.Anomaly.Sensitivity <= 0:
		return errs.InvalidField("anomaly.sensitivity", "must be greater than 0")
	case s.Anomaly.MinSamples < 1:
		return errs.InvalidField("anomaly.min_samples", "must be at least 1")
	case s.Anomaly.WindowMin < 1:
		return errs.InvalidField("anomaly.window_min", "must be at least 1")
	case s.Bandwidth.Seconds < 0:
		return errs.InvalidField("bandwidth.seconds", "must not be negative")
	case s.Iface.WarnPct < 0 || s.Iface.CritPct < 0:
		return errs.InvalidField("iface", "percentages must not be negative")
	case s.AutoResolveMin < 0:
		return errs.InvalidField("auto_resolve_min", "must not be negative")
	case s.Notifiers.EmailPort < 0 || s.Notifiers.EmailPort > 65535:
		return errs.InvalidField("notifiers.email_port", "must be 0-65535")
	}
	for _, p := range s.Ports.Ports {
		if p < 1 || p > 65535 {
			return errs.InvalidField("ports.ports", "port %d out of 1-65535", p)
		}
	}
	switch s.Notifiers.SIEM.Format {
	case "", "cef", "leef", "json", "text":
	default:
		return errs.InvalidField("notifiers.siem.format", "must be cef, leef, json or text")
	}
	switch s.Notifiers.SIEM.Transport {
	case "", "syslog-udp", "syslog-tcp", "http":
	default:
		return errs.InvalidField("notifiers.siem.transport", "must be syslog-udp, syslog-tcp or http")
	}
	switch s.Notifiers.SIEM.Framing {
	case "", "octet", "newline":
	default:
		return errs.InvalidField("notifiers.siem.framing", "must be octet or newline")
	}
	return nil
}

// clone deep-copies the slices so callers never share them.
func (s Settings) clone() Settings {
	s.Ports.Ports = append([]int{}, s.Ports.Ports...)
	s.NewProc.Ignore = append([]string{}, s.NewProc.Ignore...)
	s.Notifiers.EmailTo = append([]string{}, s.Notifiers.EmailTo...)
	return s
}
