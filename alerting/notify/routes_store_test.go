package notify_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/alerting/notify"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/storetest"
)

type auditor struct{}

func (auditor) Event(_ context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent {
	return store.AuditEvent{TS: 1, Username: who.Username, Action: action, Target: target, Result: result, Detail: detail}
}

type setter struct {
	mu  sync.Mutex
	got [][]notify.Route
}

func (s *setter) SetRoutes(rs []notify.Route) {
	s.mu.Lock()
	s.got = append(s.got, rs)
	s.mu.Unlock()
}

var admin = store.AuditActor{Username: "admin", Role: "admin", ActorType: "user"}

// TestRoutesTwoHubs: two services over one database create rules at
// once; every rule is kept, each with its own id and one audit record.
func TestRoutesTwoHubs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var n [2]setter
		hubs := [2]*notify.RouteService{
			notify.NewRouteService(notify.NewRouteRows(db), auditor{}, &n[0]),
			notify.NewRouteService(notify.NewRouteRows(db), auditor{}, &n[1]),
		}
		const each = 5
		var wg sync.WaitGroup
		for h := range hubs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if _, err := hubs[h].Create(t.Context(), admin, notify.Route{MinSeverity: h*each + i}); err != nil {
						t.Errorf("hub %d create %d: %v", h, i, err)
					}
				}
			}()
		}
		wg.Wait()
		rs, err := hubs[0].List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var ids, sev []string
		for _, r := range rs {
			ids = append(ids, r.ID)
			sev = append(sev, fmt.Sprint(r.MinSeverity))
		}
		sort.Strings(sev)
		if diff := cmp.Diff(ids, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}); diff != "" {
			t.Errorf("ids (-got, +want):\n%s", diff)
		}
		if diff := cmp.Diff(sev, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}); diff != "" {
			t.Errorf("severities (-got, +want):\n%s", diff)
		}
		recs, err := db.ListAudit(t.Context(), store.AuditFilter{Action: notify.ActionRouteCreate, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2*each {
			t.Errorf("audit records = %d, want %d", len(recs), 2*each)
		}
	})
}

// TestRoutesChange covers update, delete and refusals.
func TestRoutesChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var n setter
		svc := notify.NewRouteService(notify.NewRouteRows(db), auditor{}, &n)
		ctx := t.Context()
		if _, err := svc.Create(ctx, admin, notify.Route{MinSeverity: 11}); errs.KindOf(err) != errs.Invalid {
			t.Errorf("severity 11: %v, want invalid", err)
		}
		if _, err := svc.Create(ctx, admin, notify.Route{Channels: []string{"pager"}}); errs.KindOf(err) != errs.Invalid {
			t.Errorf("unknown channel: %v, want invalid", err)
		}
		r, err := svc.Create(ctx, admin, notify.Route{MinSeverity: 5, Channels: []string{notify.Email}})
		if err != nil || r.ID != "1" {
			t.Fatalf("create = %+v, %v, want id 1", r, err)
		}
		if _, err := svc.Update(ctx, admin, "9", notify.Route{}); errs.KindOf(err) != errs.NotFound {
			t.Errorf("update 9: %v, want not found", err)
		}
		if _, err := svc.Update(ctx, admin, "1", notify.Route{MinSeverity: 7}); err != nil {
			t.Fatal(err)
		}
		got, err := notify.NewRouteRows(db).Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, []notify.Route{{ID: "1", MinSeverity: 7}}); diff != "" {
			t.Errorf("after update (-got, +want):\n%s", diff)
		}
		if err := svc.Delete(ctx, admin, "1"); err != nil {
			t.Fatal(err)
		}
		if err := svc.Delete(ctx, admin, "1"); errs.KindOf(err) != errs.NotFound {
			t.Errorf("delete again: %v, want not found", err)
		}
		if len(n.got) != 3 || len(n.got[2]) != 0 {
			t.Errorf("notifier got %d rule sets (last %v), want 3, the last empty", len(n.got), n.got)
		}
	})
}
