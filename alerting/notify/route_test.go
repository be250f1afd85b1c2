package notify

import (
	"slices"
	"testing"

	"netmon/store/record"
)

func TestRouting(t *testing.T) {
	enabled := []string{GenericURL, Chatapp1, Email, SIEMChan}
	routes := []Route{
		{ID: "crit-to-chat", MinSeverity: 9, Channels: []string{Chatapp1, Email}, Continue: true},
		{ID: "paris-bw", Kinds: []string{"bw"}, Sites: []string{"paris"}, Channels: []string{Email}},
		{ID: "everything-to-siem", Channels: []string{SIEMChan, Teamchat}}, // teamchat is not enabled
		{ID: "never-reached", Channels: []string{GenericURL}},
	}
	quiet := []Route{{ID: "drop-info", Kinds: []string{"proc"}, Channels: nil}}
	ev := func(kind, site string, sev int) record.AlertEvent {
		return record.AlertEvent{Kind: kind, Site: site, Severity: sev}
	}
	tests := []struct {
		desc   string
		routes []Route
		ev     record.AlertEvent
		want   []string // channel@route
	}{
		{"no rule: every enabled channel", nil, ev("port", "", 9),
			[]string{"generic_url@", "chatapp1@", "email@", "siem@"}},
		{"crit continues to the catch-all", routes, ev("port", "", 9),
			[]string{"chatapp1@crit-to-chat", "email@crit-to-chat", "siem@everything-to-siem"}},
		{"bw at paris stops at its rule", routes, ev("bw", "paris", 5),
			[]string{"email@paris-bw"}},
		{"crit bw at paris: email once, by the first rule; paris-bw stops", routes, ev("bw", "paris", 9),
			[]string{"chatapp1@crit-to-chat", "email@crit-to-chat"}},
		{"bw elsewhere falls to the catch-all", routes, ev("bw", "lyon", 5),
			[]string{"siem@everything-to-siem"}},
		{"severity 8 is below 9", routes, ev("port", "", 8),
			[]string{"siem@everything-to-siem"}},
		{"a matching rule with no channel drops on purpose", quiet, ev("proc", "", 4), nil},
		{"no matching rule: every enabled channel", quiet, ev("bw", "", 5),
			[]string{"generic_url@", "chatapp1@", "email@", "siem@"}},
		{"nothing enabled: nothing", routes[:1], ev("bw", "", 1), nil},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			en := enabled
			if tc.desc == "nothing enabled: nothing" {
				en = nil
			}
			var got []string
			for _, tg := range Routing(tc.routes, en, tc.ev) {
				got = append(got, tg.Channel+"@"+tg.Route)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Routing = %q, want %q", got, tc.want)
			}
		})
	}
}
