package api

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEnumTags: struct tags cannot name a Go value, so the parameters and
// fields that repeat an enumeration list it in their tag; each must list
// exactly the enumeration's values, in its order.
func TestEnumTags(t *testing.T) {
	byName := map[string][]string{}
	for _, e := range enums() {
		byName[e.Name] = e.Values
	}
	tag := func(typ reflect.Type, field, key string) []string {
		f, ok := typ.FieldByName(field)
		if !ok {
			t.Fatalf("%s has no field %s", typ, field)
		}
		v := f.Tag.Get(key)
		if key == "jsonschema" {
			var out []string
			for _, part := range strings.Split(v, ",") {
				if e, ok := strings.CutPrefix(part, "enum="); ok {
					out = append(out, e)
				}
			}
			return out
		}
		return strings.Split(v, ",")
	}
	for _, tt := range []struct {
		desc string
		got  []string
		enum string
	}{
		{"GET /api/v1/alerts/events state", tag(reflect.TypeFor[alertEventsIn](), "State", "enum"), "AlertState"},
		{"GET /api/v1/incidents state", tag(reflect.TypeFor[incidentsIn](), "State", "enum"), "IncidentState"},
		{"Incident.state", tag(reflect.TypeFor[Incident](), "State", "jsonschema"), "IncidentState"},
		{"GET /api/v1/flows/conversations window", tag(reflect.TypeFor[conversationsIn](), "Window", "enum"), "FlowWindow"},
	} {
		want, ok := byName[tt.enum]
		if !ok {
			t.Fatalf("no enumeration %s", tt.enum)
		}
		if diff := cmp.Diff(tt.got, want); diff != "" {
			t.Errorf("%s lists other values than %s (-tag, +enum):\n%s", tt.desc, tt.enum, diff)
		}
	}
}

func TestEnums(t *testing.T) {
	got := map[string][]string{}
	for _, e := range enums() {
		if e.Description == "" {
			t.Errorf("%s has no description", e.Name)
		}
		got[e.Name] = e.Values
	}
	want := map[string][]string{
		"AlertKind":     {"bw", "port", "proc", "target", "anomaly", "ioc", "iface_util", "vpn_down", "sdwan_sla_breach", "high_sessions", "sla_breach", "time_drift"},
		"AlertState":    {"firing", "ack", "resolved"},
		"IncidentState": {"open", "ack", "investigating", "resolved", "closed"},
		"FlowWindow":    {"15m", "1h", "6h", "24h"},
		"Role":          {"global-admin", "admin", "site-admin", "netops", "auditor", "analyst", "viewer"},
		"Permission":    {"view", "operate", "analyze", "devices", "agents", "admin", "audit", "global-admin"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("enums (-got, +want):\n%s", diff)
	}
	for name, w := range map[string]int64{"15m": 15 * 60, "1h": 3600, "6h": 6 * 3600, "24h": 86400} {
		if d := windowOf(name); int64(d.Seconds()) != w {
			t.Errorf("windowOf(%s) = %s, want %d s", name, d, w)
		}
	}
}

func TestIncidentOps(t *testing.T) {
	want := map[string][]string{
		"open":          {"ack", "investigate", "resolve", "close"},
		"ack":           {"investigate", "resolve", "close"},
		"investigating": {"resolve", "close"},
		"resolved":      {"close"},
		"closed":        {},
	}
	if diff := cmp.Diff(incidentOps(), want); diff != "" {
		t.Errorf("incidentOps (-got, +want):\n%s", diff)
	}
}
