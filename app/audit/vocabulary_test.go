package audit

import (
	"context"
	"testing"

	"netmon/app/auth"
	"netmon/store"
)

// TestAuthVocabulary: app/auth, which does not import this package, names
// its actions and results itself; they must be the chain's.
func TestAuthVocabulary(t *testing.T) {
	tests := []struct{ desc, auth, audit string }{
		{"login", auth.ActionLogin, ActionLogin},
		{"logout", auth.ActionLogout, ActionLogout},
		{"access denied", auth.ActionAccessDenied, ActionAccessDenied},
		{"user create", auth.ActionUserCreate, ActionUserCreate},
		{"user update", auth.ActionUserUpdate, ActionUserUpdate},
		{"user delete", auth.ActionUserDelete, ActionUserDelete},
		{"token create", auth.ActionTokenCreate, ActionTokenCreate},
		{"token delete", auth.ActionTokenDelete, ActionTokenDelete},
		{"result ok", auth.ResultOK, ResultOK},
		{"result error", auth.ResultError, ResultError},
		{"result denied", auth.ResultDenied, ResultDenied},
	}
	for _, tt := range tests {
		if tt.auth != tt.audit {
			t.Errorf("%s: auth says %q, the audit chain %q", tt.desc, tt.auth, tt.audit)
		}
	}
}

// TestBuilder: the Builder auth is handed completes a record as Event does.
func TestBuilder(t *testing.T) {
	ctx := WithRequest(context.Background(), Request{IP: "192.0.2.1", RequestID: "r1"})
	var a auth.Auditor = Builder{}
	got := a.Event(ctx, store.AuditEvent{Username: "bob", Role: "admin", ActorType: "user", Action: ActionUserUpdate, Target: "user:1",
		Result: ResultOK, Detail: "d"}, map[string]string{"password": "x"}, nil)
	want := Event(ctx, Actor{Username: "bob", Role: "admin", ActorType: "user"}, ActionUserUpdate, "user:1", ResultOK, "d", map[string]string{"password": "x"}, nil)
	got.TS, want.TS = 0, 0
	if got != want {
		t.Errorf("Builder.Event = %+v, want %+v", got, want)
	}
}
