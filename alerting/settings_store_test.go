package alerting_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/alerting"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/storetest"
	"netmon/store/vault"
)

// auditor is app/audit's Builder in short: the tests read action,
// target and the actor back.
type auditor struct{}

func (auditor) Event(_ context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent {
	return store.AuditEvent{TS: 1, Username: who.Username, Role: who.Role, ActorType: who.ActorType, Action: action, Target: target, Result: result, Detail: detail}
}

// applied records what the service applied.
type applied struct {
	mu  sync.Mutex
	got []alerting.Settings
}

func (a *applied) Apply(s alerting.Settings) {
	a.mu.Lock()
	a.got = append(a.got, s)
	a.mu.Unlock()
}

func newVault(t *testing.T) *vault.Vault {
	t.Helper()
	var k vault.Key
	for i := range k {
		k[i] = byte(i)
	}
	v, err := vault.New(k)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var admin = store.AuditActor{Username: "admin", Role: "admin", ActorType: "user"}

// TestSettingsTwoHubs runs two services (two hubs) over one database,
// each saving patches that set a field of its own, concurrently: with a
// read-modify-write that could lose an update, one hub's save would put
// back the other's field as it read it. Every patch must be in the end
// state, and every save must have exactly one audit record.
func TestSettingsTwoHubs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		v := newVault(t)
		var eng [2]applied
		hubs := [2]*alerting.SettingsService{
			alerting.NewSettingsService(alerting.NewSettingsRows(db, v), auditor{}, &eng[0]),
			alerting.NewSettingsService(alerting.NewSettingsRows(db, v), auditor{}, &eng[1]),
		}
		// Each hub sets its own fields, several times, ending on 100+i.
		fields := [2][]string{{"cooldown_min", "auto_resolve_min"}, {"correlate_window_sec", "notifiers.email_port"}}
		const rounds = 4
		var wg sync.WaitGroup
		errc := make(chan error, 2*2*rounds)
		for h := range hubs {
			for _, f := range fields[h] {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := range rounds {
						if err := hubs[h].Update(t.Context(), admin, patch(f, 100+r)); err != nil {
							errc <- fmt.Errorf("hub %d %s: %w", h, f, err)
						}
					}
				}()
			}
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Error(err)
		}
		for h := range hubs {
			got, err := hubs[h].Get(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want := alerting.DefaultSettings()
			want.CooldownMin, want.AutoResolveMin, want.CorrelateWindowSec, want.Notifiers.EmailPort = 103, 103, 103, 103
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("hub %d reads (-got, +want):\n%s", h, diff)
			}
		}
		recs, err := db.ListAudit(t.Context(), store.AuditFilter{Action: alerting.ActionAlertsUpdate, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(recs), 2*2*rounds; got != want {
			t.Errorf("audit records = %d, want %d (one per save)", got, want)
		}
		if got, want := len(eng[0].got)+len(eng[1].got), 2*2*rounds; got != want {
			t.Errorf("applied = %d, want %d (one per save)", got, want)
		}
	})
}

// patch is a PUT /api/alerts document setting one field (a.b = n).
func patch(field string, n int) []byte {
	var doc any = n
	for i := len(field) - 1; i >= 0; i-- {
		if field[i] == '.' {
			doc = map[string]any{field[i+1:]: doc}
			field = field[:i]
		}
	}
	b, _ := json.Marshal(map[string]any{field: doc})
	return b
}

// racing is a database on which another hub saves between every read
// and write of the service: each save loses its race.
type racing struct {
	*store.DB
	n int
}

func (r *racing) GetSetting(ctx context.Context, key string) (string, error) {
	v, err := r.DB.GetSetting(ctx, key)
	if key == "alerts.secrets" {
		r.n++
		// The other hub's save: a new sealed blob (the value differs).
		if perr := r.DB.PutSetting(ctx, "alerts.config", fmt.Sprintf(`{"cooldown_min":%d}`, r.n)); perr != nil {
			return "", perr
		}
	}
	return v, err
}

// TestSettingsConflict: a save that loses every race is a conflict
// (409) after its retries, writes nothing and records nothing; one that
// loses once lands on the state that won.
func TestSettingsConflict(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		v := newVault(t)
		var eng applied
		svc := alerting.NewSettingsService(alerting.NewSettingsRows(&racing{DB: db}, v), auditor{}, &eng)
		err := svc.Update(t.Context(), admin, []byte(`{"auto_resolve_min":7}`))
		if got := errs.KindOf(err); got != errs.Conflict {
			t.Fatalf("Update error = %v (kind %v), want a conflict", err, got)
		}
		got, err := alerting.NewSettingsRows(db, v).Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got.AutoResolveMin != 0 || got.CooldownMin != 10 {
			t.Errorf("stored auto_resolve_min, cooldown_min = %d, %d, want 0, 10 (the other hub's save before each of the 10 attempts)", got.AutoResolveMin, got.CooldownMin)
		}
		recs, err := db.ListAudit(t.Context(), store.AuditFilter{Action: alerting.ActionAlertsUpdate})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 0 || len(eng.got) != 0 {
			t.Errorf("audit records, applied = %d, %d, want 0, 0", len(recs), len(eng.got))
		}
	})
}

// TestSettingsSaveRoundTrip: what Update stores, Load reads back with its
// secrets; Get masks them; the engine got the unmasked settings.
func TestSettingsSaveRoundTrip(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		v := newVault(t)
		var eng applied
		rows := alerting.NewSettingsRows(db, v)
		svc := alerting.NewSettingsService(rows, auditor{}, &eng)
		if err := svc.Update(t.Context(), admin, []byte(`{"cooldown_min":3,"notifiers":{"messenger_token":"tok"}}`)); err != nil {
			t.Fatal(err)
		}
		want := alerting.DefaultSettings()
		want.CooldownMin, want.Notifiers.MessengerToken = 3, "tok"
		got, err := rows.Load(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("Load (-got, +want):\n%s", diff)
		}
		masked, err := svc.Get(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if masked.Notifiers.MessengerToken != alerting.Masked {
			t.Errorf("Get messenger_token = %q, want %q", masked.Notifiers.MessengerToken, alerting.Masked)
		}
		if len(eng.got) != 1 || eng.got[0].Notifiers.MessengerToken != "tok" {
			t.Errorf("applied = %+v, want one save with the token", eng.got)
		}
		if doc, _ := db.GetSetting(t.Context(), "alerts.config"); json.Valid([]byte(doc)) && containsTok(doc) {
			t.Errorf("the document row holds the secret: %s", doc)
		}
		// A refused patch stores nothing.
		err = svc.Update(t.Context(), admin, []byte(`{"cooldown_min":-1}`))
		if got := errs.KindOf(err); got != errs.Invalid {
			t.Errorf("invalid patch: kind %v (%v), want invalid", got, err)
		}
	})
}

func containsTok(doc string) bool {
	var m map[string]any
	_ = json.Unmarshal([]byte(doc), &m)
	n, _ := m["notifiers"].(map[string]any)
	return n["messenger_token"] != ""
}
