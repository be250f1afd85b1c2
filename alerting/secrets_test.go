package alerting

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stored is a configuration with every bound credential set.
func stored() Settings {
	s := DefaultSettings()
	n := &s.Notifiers
	n.SIEM = SIEM{Enabled: true, Transport: "http", Target: "https://siem.example/in?key=K", Token: "Bearer T"}
	n.EmailHost, n.EmailPort, n.EmailPass = "mail.example", 0, "PW"
	n.WebhookV2URL, n.WebhookV2Secret = "https://hook.example/w", "WS"
	n.TicketURL, n.TicketToken = "https://itsm.example/t", "TT"
	n.GenericURL = "https://generic.example/g?token=G"
	return s
}

// TestSecretUpdate: the update convention of PUT /api/alerts (absent,
// null or masked keeps; "" clears; a kept credential cannot follow a new
// destination).
func TestSecretUpdate(t *testing.T) {
	tests := []struct {
		desc    string
		doc     string
		wantErr string
		check   func(Settings) string // "" when right
	}{
		{"absent keeps", `{"cooldown_min":3}`, "", func(s Settings) string {
			return cmp.Diff(s.Notifiers.SIEM.Token+s.Notifiers.EmailPass+s.Notifiers.GenericURL, "Bearer TPWhttps://generic.example/g?token=G")
		}},
		{"mask and null keep", `{"notifiers":{"generic_url":"********","email_pass":null,"siem":{"token":"********","target":"********"}}}`, "", func(s Settings) string {
			return cmp.Diff(s.Notifiers.SIEM.Token+s.Notifiers.EmailPass+s.Notifiers.GenericURL+s.Notifiers.SIEM.Target,
				"Bearer TPWhttps://generic.example/g?token=Ghttps://siem.example/in?key=K")
		}},
		{"empty clears", `{"notifiers":{"generic_url":"","email_pass":"","siem":{"token":""}}}`, "", func(s Settings) string {
			return cmp.Diff(s.Notifiers.SIEM.Token+s.Notifiers.EmailPass+s.Notifiers.GenericURL, "")
		}},
		{"siem re-pointed, token kept", `{"notifiers":{"siem":{"target":"https://evil.example/"}}}`, "notifiers.siem.token: the destination changed: send the secret again, or \"\" to clear it", nil},
		{"siem re-pointed, token given", `{"notifiers":{"siem":{"target":"https://new.example/","token":"Bearer N"}}}`, "", func(s Settings) string {
			return cmp.Diff(s.Notifiers.SIEM.Token, "Bearer N")
		}},
		{"siem insecure, token kept", `{"notifiers":{"siem":{"insecure":true}}}`, "notifiers.siem.token: the destination changed: send the secret again, or \"\" to clear it", nil},
		{"siem target cleared, token kept (nothing is sent)", `{"notifiers":{"siem":{"target":""}}}`, "", nil},
		{"email port 0 is 587: no change", `{"notifiers":{"email_port":587}}`, "", nil},
		{"email port changed", `{"notifiers":{"email_port":25}}`, "notifiers.email_pass: the destination changed: send the secret again, or \"\" to clear it", nil},
		{"webhook re-pointed", `{"notifiers":{"webhook_v2_url":"https://evil.example/"}}`, "notifiers.webhook_v2_secret: the destination changed: send the secret again, or \"\" to clear it", nil},
		{"ticket re-pointed, token cleared", `{"notifiers":{"ticket_url":"https://evil.example/","ticket_token":""}}`, "", func(s Settings) string {
			return cmp.Diff(s.Notifiers.TicketToken, "")
		}},
		{"the same destination sent in clear", `{"notifiers":{"ticket_url":"https://itsm.example/t"}}`, "", func(s Settings) string {
			return cmp.Diff(s.Notifiers.TicketToken, "TT")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := stored().Update([]byte(tt.doc))
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if msg != tt.wantErr {
				t.Fatalf("error %q, want %q", msg, tt.wantErr)
			}
			if tt.check != nil {
				if d := tt.check(got); d != "" {
					t.Errorf("(-got, +want):\n%s", d)
				}
			}
		})
	}
}

// TestSecretMaskAndSeal: the SIEM target is masked when it may carry a
// credential and shown when it is a syslog host:port; every secret is
// split off for sealing, and an array sealed before siem.target was a
// secret leaves the document's target in place.
func TestSecretMaskAndSeal(t *testing.T) {
	for _, tt := range []struct {
		siem SIEM
		want string
	}{
		{SIEM{Transport: "http", Target: "https://siem.example/in"}, Masked},
		{SIEM{Transport: "syslog-udp", Target: "siem.example:514"}, "siem.example:514"},
		{SIEM{Transport: "syslog-tcp", Target: "https://u:p@siem.example/"}, Masked},
		{SIEM{Transport: "http"}, ""},
	} {
		s := DefaultSettings()
		s.Notifiers.SIEM = tt.siem
		if got := s.Masked().Notifiers.SIEM.Target; got != tt.want {
			t.Errorf("%+v: masked target %q, want %q", tt.siem, got, tt.want)
		}
	}
	plain, vals := stored().SplitSecrets()
	if _, none := plain.SplitSecrets(); cmp.Diff(none, make([]string, 12)) != "" {
		t.Errorf("the plain document keeps secrets: %q", none)
	}
	if d := cmp.Diff(plain.WithSecrets(vals), stored()); d != "" {
		t.Errorf("round trip (-got, +want):\n%s", d)
	}
	old := plain
	old.Notifiers.SIEM.Target = "siem.example:514"
	if got := old.WithSecrets(vals[:11]).Notifiers.SIEM.Target; got != "siem.example:514" {
		t.Errorf("an 11-value array: target %q", got)
	}
}
