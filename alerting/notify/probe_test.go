package notify_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/alerting/notify"
	"netmon/app/errs"
	"netmon/store"
)

type fakeTester struct{ err error }

func (f fakeTester) Test(context.Context, string) error { return f.err }

type memLog struct{ got []store.AuditEvent }

func (m *memLog) AppendAudit(_ context.Context, e store.AuditEvent) (store.AuditEvent, error) {
	m.got = append(m.got, e)
	return e, nil
}

// TestProbe: a send test is recorded whatever its outcome; an unknown
// channel or no delivery is refused and not recorded.
func TestProbe(t *testing.T) {
	tests := []struct {
		desc       string
		tester     notify.Tester
		channel    string
		wantOK     bool
		wantReason string
		wantKind   errs.Kind // 0: no error
		wantAudit  []store.AuditEvent
	}{
		{desc: "sent", tester: fakeTester{}, channel: notify.Email, wantOK: true,
			wantAudit: []store.AuditEvent{{TS: 1, Username: "admin", Action: "alert.channel.test", Target: "alert_channels/email", Result: "ok"}}},
		{desc: "failed", tester: fakeTester{err: errors.New("status 500")}, channel: notify.Teamchat, wantReason: "status 500",
			wantAudit: []store.AuditEvent{{TS: 1, Username: "admin", Action: "alert.channel.test", Target: "alert_channels/teamchat", Result: "error", Detail: "status 500"}}},
		{desc: "unknown channel", tester: fakeTester{}, channel: "pager", wantKind: errs.Invalid},
		{desc: "no delivery", channel: notify.Email, wantKind: errs.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			log := &memLog{}
			ok, reason, err := notify.NewProbe(tt.tester, log, auditor{}).Test(context.Background(), admin, tt.channel)
			if (err == nil) != (tt.wantKind == 0) || (err != nil && errs.KindOf(err) != tt.wantKind) {
				t.Fatalf("err = %v, want kind %v", err, tt.wantKind)
			}
			if ok != tt.wantOK || reason != tt.wantReason {
				t.Errorf("ok, reason = %v, %q, want %v, %q", ok, reason, tt.wantOK, tt.wantReason)
			}
			if diff := cmp.Diff(log.got, tt.wantAudit); diff != "" {
				t.Errorf("audit (-got, +want):\n%s", diff)
			}
		})
	}
}
