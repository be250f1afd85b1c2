package audit

import (
	"context"
	"netmon/app/ai"
	"testing"

	"netmon/alerting"
	"netmon/alerting/notify"
	"netmon/app/auth"
	"netmon/app/compliance"
	"netmon/app/fleet/agents"
	"netmon/app/fleet/enroll"
	"netmon/app/reports"
)

// TestServiceVocabulary: the services, which do not import this package,
// name their actions and results themselves; they must be the chain's.
func TestServiceVocabulary(t *testing.T) {
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
		{"enroll token create", enroll.ActionEnrollTokenCreate, ActionEnrollTokenCreate},
		{"enroll token revoke", enroll.ActionEnrollTokenRevoke, ActionEnrollTokenRevoke},
		{"enroll token used", enroll.ActionEnrollTokenUsed, ActionEnrollTokenUsed},
		{"static token rotate", enroll.ActionStaticTokenRotate, ActionStaticTokenRotate},
		{"enroll result ok", enroll.ResultOK, ResultOK},
		{"enroll result denied", enroll.ResultDenied, ResultDenied},
		{"agent update", agents.ActionAgentUpdate, ActionAgentUpdate},
		{"agent delete", agents.ActionAgentDelete, ActionAgentDelete},
		{"agents result ok", agents.ResultOK, ResultOK},
		{"alerts update", alerting.ActionAlertsUpdate, ActionAlertsUpdate},
		{"alert route create", notify.ActionRouteCreate, ActionAlertRouteCreate},
		{"alert route update", notify.ActionRouteUpdate, ActionAlertRouteUpdate},
		{"alert route delete", notify.ActionRouteDelete, ActionAlertRouteDelete},
		{"alert channel test", notify.ActionChannelTest, ActionAlertChannelTest},
		{"isms create", compliance.ActionISMSCreate, ActionISMSCreate},
		{"isms update", compliance.ActionISMSUpdate, ActionISMSUpdate},
		{"report generate", reports.ActionGenerate, ActionReportGenerate},
		{"ai analyze", ai.ActionAnalyze, ActionAIAnalyze},
		{"ai provider create", ai.ActionProviderCreate, ActionAIProviderCreate},
		{"ai provider update", ai.ActionProviderUpdate, ActionAIProviderUpdate},
		{"ai provider delete", ai.ActionProviderDelete, ActionAIProviderDelete},
		{"report schedule create", reports.ActionScheduleCreate, ActionReportScheduleCreate},
		{"report schedule delete", reports.ActionScheduleDelete, ActionReportScheduleDelete},
		{"report schedule run", reports.ActionScheduleRun, ActionReportScheduleRun},
		{"report archive delete", reports.ActionArchiveDelete, ActionReportArchiveDelete},
		{"sla target create", reports.ActionSLATargetCreate, ActionSLATargetCreate},
		{"sla target delete", reports.ActionSLATargetDelete, ActionSLATargetDelete},
	}
	for _, tt := range tests {
		if tt.auth != tt.audit {
			t.Errorf("%s: auth says %q, the audit chain %q", tt.desc, tt.auth, tt.audit)
		}
	}
}

// TestBuilder: the Builder the services are handed builds what Event
// builds.
func TestBuilder(t *testing.T) {
	ctx := WithRequest(context.Background(), Request{IP: "192.0.2.1", RequestID: "r1"})
	who := Actor{Username: "bob", Role: "admin", ActorType: "user"}
	var _ enroll.Auditor = Builder{}
	var _ agents.Auditor = Builder{}
	var _ alerting.Auditor = Builder{}
	var _ notify.Auditor = Builder{}
	var _ compliance.Auditor = Builder{}
	var a auth.Auditor = Builder{}
	got := a.Event(ctx, who, ActionUserUpdate, "user:1", ResultOK, "d", map[string]string{"password": "x"}, nil)
	want := Event(ctx, who, ActionUserUpdate, "user:1", ResultOK, "d", map[string]string{"password": "x"}, nil)
	got.TS, want.TS = 0, 0
	if got != want {
		t.Errorf("Builder.Event = %+v, want %+v", got, want)
	}
}
