package hub

import (
	"context"
	"netmon/alerting"
	"strings"
	"testing"

	"netmon/store"
	"netmon/store/storetest"
)

// TestAlertConfig: GET/PUT /api/alerts on both databases — defaults,
// partial sections, the sensitivity check, secrets masked and kept
// (RELIABILITY case 30), sealed at rest, audited with the secrets masked,
// and refused when the audit record cannot be written (case 17).
func TestAlertConfig(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn)
		ctx := context.Background()
		var got map[string]any
		boot.call("GET", "/api/alerts", nil).must(t, 200).decode(t, &got)
		if got["cooldown_min"] != 10.0 || got["anomaly"].(map[string]any)["sensitivity"] != 3.0 {
			t.Fatalf("defaults: %v", got)
		}

		// Sensitivity 0 is refused, naming the field; nothing is stored.
		r := boot.call("PUT", "/api/alerts", `{"anomaly":{"sensitivity":0}}`).must(t, 400)
		if r.body != `{"error":"anomaly.sensitivity: must be greater than 0"}` {
			t.Errorf("sensitivity 0: %s", r.body)
		}

		// A partial section changes only its fields.
		boot.call("PUT", "/api/alerts", `{"anomaly":{"enabled":true},"notifiers":{"messenger_token":"tok-123","email_pass":"pw-456","siem":{"token":"siem-789"}}}`).must(t, 200)
		r = boot.call("GET", "/api/alerts", nil).must(t, 200)
		for _, want := range []string{`"sensitivity":3`, `"enabled":true,"sensitivity"`, `"messenger_token":"********"`, `"email_pass":"********"`, `"token":"********"`, `"webhook_v2_secret":""`} {
			if !strings.Contains(r.body, want) {
				t.Errorf("after partial put: %s lacks %s", r.body, want)
			}
		}
		for _, secret := range []string{"tok-123", "pw-456", "siem-789"} {
			if strings.Contains(r.body, secret) {
				t.Errorf("GET shows the secret %s", secret)
			}
		}

		// The mask, null and an absent field keep the stored secrets (an
		// empty string clears one: TestAlertSecretRepoint).
		boot.call("PUT", "/api/alerts", `{"cooldown_min":5,"notifiers":{"messenger_token":"********","email_pass":null,"siem":{"token":"********"}}}`).must(t, 200)
		s, err := alerting.NewSettingsRows(h.db, h.vault).Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.CooldownMin != 5 || s.Notifiers.MessengerToken != "tok-123" || s.Notifiers.EmailPass != "pw-456" || s.Notifiers.SIEM.Token != "siem-789" || !s.Anomaly.Enabled {
			t.Errorf("after a masked put: %+v", s)
		}

		// At rest: no secret in clear in the settings table.
		var n int
		if err := h.db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM settings WHERE value LIKE '%tok-123%' OR value LIKE '%pw-456%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%d settings rows hold a secret in clear", n)
		}

		// Audited, secrets masked.
		evs, err := h.db.ListAudit(ctx, store.AuditFilter{Action: "alerts.update"})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 {
			t.Fatalf("%d alerts.update records, want 2", len(evs))
		}
		for _, ev := range evs {
			all := ev.BeforeJSON + ev.AfterJSON
			if strings.Contains(all, "tok-123") || strings.Contains(all, "pw-456") || strings.Contains(all, "siem-789") {
				t.Errorf("audit record %d shows a secret: %s", ev.ID, all)
			}
		}
		if !strings.Contains(evs[0].AfterJSON, `"cooldown_min":5`) || !strings.Contains(evs[0].BeforeJSON, `"cooldown_min":10`) {
			t.Errorf("newest record: before %s after %s", evs[0].BeforeJSON, evs[0].AfterJSON)
		}

		// Case 17: no audit record, no change.
		auditDown(t, h)
		boot.call("PUT", "/api/alerts", `{"cooldown_min":7}`).must(t, 500)
		if s, err := alerting.NewSettingsRows(h.db, h.vault).Load(ctx); err != nil || s.CooldownMin != 5 {
			t.Errorf("after a failed audit: cooldown %d, %v", s.CooldownMin, err)
		}
		boot.call("GET", "/api/alerts", nil).must(t, 200) // reads go on
	})
}

// TestAlertConfigOldDocument: a stored configuration from before the
// anomaly section gets its defaults.
func TestAlertConfigOldDocument(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn)
		if err := h.db.PutSetting(context.Background(), "alerts.config", `{"enabled":true,"cooldown_min":3}`); err != nil {
			t.Fatal(err)
		}
		r := boot.call("GET", "/api/alerts", nil).must(t, 200)
		if !strings.Contains(r.body, `"cooldown_min":3`) || !strings.Contains(r.body, `"anomaly":{"enabled":false,"sensitivity":3,"min_samples":120,"window_min":5,"crit_z":0}`) {
			t.Errorf("old document: %s", r.body)
		}
	})
}
