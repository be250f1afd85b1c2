package hub

import (
	"context"
	"fmt"
	"testing"
	"time"

	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestIncidentRoutes: on both databases, the correlation engine opens an
// incident from an agent's events; the list and the detail (with member
// events) follow the site scope; the operations walk the state machine
// with 409 on a move it does not allow, each audited.
func TestIncidentRoutes(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true; c.Alerts.Enabled = false })
		ctx := context.Background()
		now := time.Now().Unix()
		var ids []int64
		for _, e := range []record.AlertEvent{
			{Kind: "proc", Key: "7|nc", Message: "agent 7: new process <b>nc</b>", Severity: 4, Site: "a", AgentID: 7},
			{Kind: "ioc", Key: "7|x.evil.test", Message: "ioc", Severity: 8, Site: "a", AgentID: 7},
			{Kind: "bw", Key: "in", Message: "bw", Severity: 5}, // the hub's: no rule with it alone
		} {
			e.TS, e.State = now, "firing"
			stored, err := h.db.InsertAlertEvent(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, stored.ID)
		}
		incs, err := h.incidents.RunOnce(ctx)
		if err != nil || len(incs) != 1 {
			t.Fatalf("correlation: %+v, %v", incs, err)
		}
		id := incs[0].ID
		var list []record.Incident
		boot.call("GET", "/api/v1/incidents", nil).must(t, 200).decode(t, &list)
		if len(list) != 1 || list[0].Key != "r1|agent7" || list[0].Rule != 1 || list[0].Site != "a" || list[0].Severity != 8 || list[0].Risk != 66 ||
			list[0].State != "open" || list[0].Title != "agent 7: new process + new target/ioc (2 events: proc, ioc)" {
			t.Fatalf("list: %+v", list)
		}
		var detail struct {
			record.Incident
			Events []record.AlertEvent `json:"events"`
		}
		boot.call("GET", fmt.Sprintf("/api/v1/incidents/%d", id), nil).must(t, 200).decode(t, &detail)
		if len(detail.Events) != 2 || detail.Events[0].ID != ids[0] || detail.Events[1].ID != ids[1] || detail.Events[0].Message != "agent 7: new process <b>nc</b>" {
			t.Fatalf("detail: %+v", detail)
		}

		boot.createUser("bob", "bob-password-1", "netops", "b")
		bob := h.client(t)
		bob.login("bob", "bob-password-1")
		bob.call("GET", "/api/v1/incidents", nil).must(t, 200).decode(t, &list)
		if len(list) != 0 {
			t.Errorf("site b sees site a's incidents: %+v", list)
		}
		bob.call("GET", fmt.Sprintf("/api/v1/incidents/%d", id), nil).must(t, 404)
		bob.call("POST", fmt.Sprintf("/api/v1/incidents/%d/ack", id), nil).must(t, 404)
		boot.createUser("vera", "vera-password-1", "viewer", "")
		vera := h.client(t)
		vera.login("vera", "vera-password-1")
		vera.call("POST", fmt.Sprintf("/api/v1/incidents/%d/ack", id), nil).must(t, 403)

		for _, step := range []struct {
			op    string
			code  int
			state string
		}{
			{"resolve", 200, "resolved"}, // straight from open
			{"ack", 409, ""},             // resolved cannot be acknowledged
			{"resolve", 409, ""},
			{"close", 200, "closed"},
			{"close", 409, ""},
			{"reopen", 404, ""}, // not an operation: no such route
		} {
			r := boot.call("POST", fmt.Sprintf("/api/v1/incidents/%d/%s", id, step.op), nil)
			if r.code != step.code {
				t.Fatalf("%s: %d %s, want %d", step.op, r.code, r.body, step.code)
			}
			if step.code == 200 {
				var inc record.Incident
				r.decode(t, &inc)
				if inc.State != step.state || inc.ClosedTS == 0 {
					t.Errorf("%s: %+v", step.op, inc)
				}
			}
		}
		recs, err := h.db.ListAudit(ctx, store.AuditFilter{Action: "incident.*"})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 || recs[0].Action != "incident.close" || recs[1].Action != "incident.resolve" || recs[0].Target != fmt.Sprintf("incidents/%d", id) {
			t.Errorf("audit: %+v", recs)
		}

		// A new correlation of the key opens a new incident; ack then
		// investigate walk the other branch.
		incs, err = h.incidents.RunOnce(ctx)
		if err != nil || len(incs) != 1 || incs[0].ID == id || incs[0].State != "open" {
			t.Fatalf("after close: %+v, %v", incs, err)
		}
		second := incs[0].ID
		boot.call("POST", fmt.Sprintf("/api/v1/incidents/%d/ack", second), nil).must(t, 200)
		boot.call("POST", fmt.Sprintf("/api/v1/incidents/%d/ack", second), nil).must(t, 409)
		boot.call("POST", fmt.Sprintf("/api/v1/incidents/%d/investigate", second), nil).must(t, 200)
		if again, err := h.incidents.RunOnce(ctx); err != nil || len(again) != 1 || again[0].ID != second || again[0].State != "investigating" {
			t.Fatalf("a repeat while investigating: %+v, %v", again, err)
		}
	})
}
