package siem

import (
	"testing"
	"time"

	"netmon/store/record"
)

var portEvent = record.AlertEvent{ID: 7, TS: 1764000000, Kind: "port", Key: "agent1|10.0.0.5:4444", Severity: 9, Site: "paris",
	Message: "connection to 203.0.113.9:4444 (suspicious port)", State: record.AlertFiring, Count: 1}

// nasty carries every character the formats escape.
var nasty = record.AlertEvent{TS: 1764000000, Kind: "a|b", Key: `k=v\x`, Severity: 4,
	Message: "line1\nline2\r\tpipe|eq=back\\"}

func TestFormat(t *testing.T) {
	tests := []struct {
		desc, format string
		ev           record.AlertEvent
		want         string
	}{
		{"CEF", "", portEvent,
			`CEF:0|netmon|netmon|1.0|port|Suspicious remote port|9|rt=1764000000000 cat=port cs1Label=key cs1=agent1|10.0.0.5:4444 msg=connection to 203.0.113.9:4444 (suspicious port)`},
		{"CEF escaping", "cef", nasty,
			`CEF:0|netmon|netmon|1.0|a\|b|a\|b|4|rt=1764000000000 cat=a|b cs1Label=key cs1=k\=v\\x msg=line1\nline2\r	pipe|eq\=back\\`},
		{"LEEF", "leef", portEvent,
			"LEEF:1.0|netmon|netmon|1.0|port|devTime=1764000000000\tsev=9\tcat=port\tkey=agent1|10.0.0.5:4444\tmsg=connection to 203.0.113.9:4444 (suspicious port)"},
		{"LEEF escaping", "leef", nasty,
			`LEEF:1.0|netmon|netmon|1.0|a\|b|devTime=1764000000000` + "\t" + `sev=4` + "\t" + `cat=a|b` + "\t" + `key=k\=v\\x` + "\t" + `msg=line1\nline2\r\tpipe|eq\=back\\`},
		{"JSON", "json", portEvent,
			`{"service":"netmon","id":7,"ts":1764000000,"kind":"port","key":"agent1|10.0.0.5:4444","message":"connection to 203.0.113.9:4444 (suspicious port)","severity":9,"state":"firing","site":"paris","count":1,"group_id":0,"ext_ref":"","agent_id":0,"last_ts":0,"resolved_ts":0,"process":""}`},
		{"text", "text", portEvent,
			`netmon alert kind=port severity=9 key="agent1|10.0.0.5:4444" site="paris" msg="connection to 203.0.113.9:4444 (suspicious port)"`},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			got, err := Format(tc.format, tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Format(%q):\n got %s\nwant %s", tc.format, got, tc.want)
			}
		})
	}
	if _, err := Format("xml", portEvent); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestFrame(t *testing.T) {
	at := time.Date(2026, 11, 5, 9, 4, 5, 0, time.UTC)
	tests := []struct {
		sev  int
		want string
	}{
		{10, "<129>Nov  5 09:04:05 hub1 netmon: x"},
		{9, "<130>Nov  5 09:04:05 hub1 netmon: x"},
		{8, "<131>Nov  5 09:04:05 hub1 netmon: x"},
		{5, "<132>Nov  5 09:04:05 hub1 netmon: x"},
		{4, "<132>Nov  5 09:04:05 hub1 netmon: x"},
		{2, "<133>Nov  5 09:04:05 hub1 netmon: x"},
		{0, "<134>Nov  5 09:04:05 hub1 netmon: x"},
	}
	for _, tc := range tests {
		if got := Frame("x", tc.sev, at, "hub1"); got != tc.want {
			t.Errorf("Frame(sev %d) = %q, want %q", tc.sev, got, tc.want)
		}
	}
}

func FuzzFormat(f *testing.F) {
	f.Add("port", "k|=\\", "m\n\t|=", 9)
	f.Fuzz(func(t *testing.T, kind, key, msg string, sev int) {
		for _, fm := range []string{"cef", "leef"} {
			line, err := Format(fm, record.AlertEvent{Kind: kind, Key: key, Message: msg, Severity: sev})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range line {
				if r == '\n' || r == '\r' {
					t.Fatalf("%s line carries a line break: %q", fm, line)
				}
			}
		}
	})
}
