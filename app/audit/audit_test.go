package audit

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMask(t *testing.T) {
	tests := []struct {
		desc string
		in   any
		want string
	}{
		{"nil", nil, ""},
		{"secrets masked, others kept", map[string]any{"username": "bob", "password": "hunter22", "role": "viewer"},
			`{"password":"***","role":"viewer","username":"bob"}`},
		{"nested and in arrays", map[string]any{"notifiers": map[string]any{"email_pass": "p", "webhook_v2_secret": "s", "url": "u"},
			"devices": []any{map[string]any{"community": "public", "v3_auth_pass": "x", "name": "sw1"}}},
			`{"devices":[{"community":"***","name":"sw1","v3_auth_pass":"***"}],"notifiers":{"email_pass":"***","url":"u","webhook_v2_secret":"***"}}`},
		{"struct tags honoured", struct {
			Name     string `json:"name"`
			APIToken string `json:"api_token"`
			Hash     string `json:"password_hash"`
		}{"k", "bnt_abc", "$2a$10$x"}, `{"api_token":"***","name":"k","password_hash":"***"}`},
		{"empty secret stays empty (it says 'not set')", map[string]any{"password": ""}, `{"password":""}`},
		{"a URL carrying a credential, whatever its field (issue 28)", map[string]any{"siem": map[string]any{
			"target": "https://u:pw@siem.example/in", "other": "https://siem.example/in?Key=abc", "plain": "https://siem.example/in?format=cef",
			"hostport": "siem.example:514", "broken": "http://%zz@x"}},
			`{"siem":{"broken":"***","hostport":"siem.example:514","other":"***","plain":"https://siem.example/in?format=cef","target":"***"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if diff := cmp.Diff(Mask(tt.in), tt.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}

func TestEventTakesRequestAndClips(t *testing.T) {
	ctx := WithRequest(context.Background(), Request{IP: "192.0.2.7", RequestID: "r1", UserAgent: "curl/8"})
	e := Event(ctx, Actor{Username: strings.Repeat("é", 100), Role: "admin", ActorType: "user"}, ActionUserCreate, "user:5", ResultOK, "", nil, map[string]string{"password": "x"})
	if e.IP != "192.0.2.7" || e.RequestID != "r1" || e.UserAgent != "curl/8" || e.Action != "user.create" || e.Result != "ok" {
		t.Errorf("event %+v", e)
	}
	if len(e.Username) > 128 || !strings.HasPrefix(e.Username, "é") {
		t.Errorf("username not clipped on a rune boundary: %d bytes", len(e.Username))
	}
	if e.AfterJSON != `{"password":"***"}` || e.BeforeJSON != "" {
		t.Errorf("before %q after %q", e.BeforeJSON, e.AfterJSON)
	}
}
