// Package siem turns alert events into SIEM lines (CEF, LEEF, JSON,
// text; spec 6.4) and forwards them over syslog (UDP or TCP, RFC 3164
// framing, PRI = local0 + severity) or HTTP. alerting/notify runs it as
// one of its channels; every connection is dialled through the hub's
// outbound guard (app/netguard).
package siem

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"netmon/store/record"
)

// Formats and transports of spec 2.5 (the first of each is the default).
const (
	FormatCEF  = "cef"
	FormatLEEF = "leef"
	FormatJSON = "json"
	FormatText = "text"

	TransportUDP  = "syslog-udp"
	TransportTCP  = "syslog-tcp"
	TransportHTTP = "http"
)

// service is the vendor and product of CEF and LEEF headers (spec: <service>).
const service = "netmon"

// labels are the CEF "Name" of each kind.
var labels = map[string]string{
	"bw":               "Bandwidth over threshold",
	"port":             "Suspicious remote port",
	"proc":             "New process",
	"target":           "New remote target",
	"anomaly":          "Traffic anomaly",
	"ioc":              "Threat indicator match",
	"iface_util":       "Interface utilisation",
	"vpn_down":         "VPN tunnel down",
	"sdwan_sla_breach": "SD-WAN SLA breach",
	"high_sessions":    "High session count",
	"sla_breach":       "SLA breach",
	"time_drift":       "Clock drift",
}

// Label is the human name of a kind (the kind itself when unknown).
func Label(kind string) string {
	if l, ok := labels[kind]; ok {
		return l
	}
	return kind
}

// Format renders ev as one line in format ("" = cef). The time is the
// event's first firing, in milliseconds since the epoch (CEF rt and LEEF
// devTime both accept it).
func Format(format string, ev record.AlertEvent) (string, error) {
	ms := strconv.FormatInt(ev.TS*1000, 10)
	sev := strconv.Itoa(clampSeverity(ev.Severity))
	switch format {
	case "", FormatCEF:
		return "CEF:0|" + service + "|" + service + "|1.0|" + cefHeader(ev.Kind) + "|" + cefHeader(Label(ev.Kind)) + "|" + sev +
			"|rt=" + ms + " cat=" + cefExt(ev.Kind) + " cs1Label=key cs1=" + cefExt(ev.Key) + " msg=" + cefExt(ev.Message), nil
	case FormatLEEF:
		return "LEEF:1.0|" + service + "|" + service + "|1.0|" + leefHeader(ev.Kind) + "|devTime=" + ms +
			"\tsev=" + sev + "\tcat=" + leefValue(ev.Kind) + "\tkey=" + leefValue(ev.Key) + "\tmsg=" + leefValue(ev.Message), nil
	case FormatJSON:
		b, err := json.Marshal(struct {
			Service string `json:"service"`
			record.AlertEvent
		}{service, ev})
		return string(b), err
	case FormatText:
		return fmt.Sprintf("%s alert kind=%s severity=%s key=%q site=%q msg=%q", service, ev.Kind, sev, ev.Key, ev.Site, ev.Message), nil
	}
	return "", fmt.Errorf("siem format %q: want cef, leef, json or text", format)
}

func clampSeverity(s int) int { return min(max(s, 0), 10) }

// cefHeader escapes a CEF header field: backslash and pipe; a line break
// would end the record, so it becomes a space.
func cefHeader(s string) string {
	return strings.NewReplacer(`\`, `\\`, `|`, `\|`, "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// cefExt escapes a CEF extension value: backslash, equals sign, and line
// breaks as \n and \r (CEF Implementation Standard, "Character Encoding").
func cefExt(s string) string {
	return strings.NewReplacer(`\`, `\\`, `=`, `\=`, "\r\n", `\n`, "\n", `\n`, "\r", `\r`).Replace(s)
}

// leefHeader escapes a LEEF header field (pipe and backslash).
func leefHeader(s string) string { return cefHeader(s) }

// leefValue escapes a LEEF attribute value: backslash, equals sign, the
// tab delimiter and line breaks.
func leefValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `=`, `\=`, "\t", `\t`, "\r\n", `\n`, "\n", `\n`, "\r", `\r`).Replace(s)
}

// SyslogSeverity maps the 0-10 CEF scale to a syslog severity 0-7:
// 10 alert, 9 critical, 7-8 error, 4-6 warning, 1-3 notice, 0 info.
func SyslogSeverity(sev int) int {
	switch s := clampSeverity(sev); {
	case s >= 10:
		return 1
	case s == 9:
		return 2
	case s >= 7:
		return 3
	case s >= 4:
		return 4
	case s >= 1:
		return 5
	}
	return 6
}

// facilityLocal0 is syslog facility 16.
const facilityLocal0 = 16

// Frame wraps line in RFC 3164 framing: <PRI>Mmm dd hh:mm:ss host tag: line.
func Frame(line string, sev int, at time.Time, host string) string {
	pri := facilityLocal0*8 + SyslogSeverity(sev)
	return "<" + strconv.Itoa(pri) + ">" + at.UTC().Format(time.Stamp) + " " + host + " " + service + ": " + line
}
