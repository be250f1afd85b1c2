package hub

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// seedAlerts stores three events: a hub bw (no site), a port of site a,
// a proc of site b.
func seedAlerts(t *testing.T, db *store.DB) []int64 {
	t.Helper()
	var ids []int64
	for _, e := range []record.AlertEvent{
		{TS: 1000, Kind: "bw", Key: "hub|in", Message: "bandwidth in 120.0 Mbit/s over 100.0 Mbit/s for 10 s", Severity: 5, State: "firing"},
		{TS: 2000, Kind: "port", Key: "3|198.51.100.7:4444", Message: "agent 3: nc connected to suspicious port 4444 on 198.51.100.7", Severity: 9, State: "firing", Site: "a", AgentID: 3},
		{TS: 2000, Kind: "proc", Key: "4|<script>", Message: "agent 4: new process <script>alert(1)</script>", Severity: 4, State: "firing", Site: "b", AgentID: 4},
	} {
		got, err := db.InsertAlertEvent(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got.ID)
	}
	return ids
}

// TestAlertRoutes: the alert event and silence routes with exact bodies,
// on both databases: paging, filters, site scope, the lifecycle and its
// audit records.
func TestAlertRoutes(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		ctx := context.Background()
		ids := seedAlerts(t, h.db)

		// The short list: spec 2.6 fields, newest first.
		r := boot.call("GET", "/api/alerts/events?limit=1", nil).must(t, 200)
		want := fmt.Sprintf(`[{"id":%d,"ts":2000,"kind":"proc","key":"4|\u003cscript\u003e","message":"agent 4: new process \u003cscript\u003ealert(1)\u003c/script\u003e","severity":4,"state":"firing","site":"b","count":1,"group_id":0,"ext_ref":"","agent_id":4}]`, ids[2])
		if r.body != want {
			t.Errorf("short list:\n got %s\nwant %s", r.body, want)
		}

		// Paging with the cursor, and filters.
		var page struct {
			Events []record.AlertEvent `json:"events"`
			Next   string              `json:"next_before"`
		}
		boot.call("GET", "/api/v1/alerts/events?limit=2", nil).must(t, 200).decode(t, &page)
		if len(page.Events) != 2 || page.Events[0].ID != ids[2] || page.Events[1].ID != ids[1] || page.Next != fmt.Sprintf("2000:%d", ids[1]) {
			t.Fatalf("page 1: %+v", page)
		}
		boot.call("GET", "/api/v1/alerts/events?limit=2&before="+page.Next, nil).must(t, 200).decode(t, &page)
		if len(page.Events) != 1 || page.Events[0].ID != ids[0] || page.Next != "" {
			t.Fatalf("page 2: %+v", page)
		}
		for _, tt := range []struct {
			query string
			want  []int64
		}{
			{"kind=port", []int64{ids[1]}},
			{"severity=5", []int64{ids[1], ids[0]}},
			{"site=b", []int64{ids[2]}},
			{"agent=3", []int64{ids[1]}},
			{"from=1500&to=2500", []int64{ids[2], ids[1]}},
			{"state=resolved", nil},
		} {
			boot.call("GET", "/api/v1/alerts/events?"+tt.query, nil).must(t, 200).decode(t, &page)
			var got []int64
			for _, e := range page.Events {
				got = append(got, e.ID)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s: %v, want %v", tt.query, got, tt.want)
			}
		}
		for _, q := range []string{"before=junk", "state=open", "severity=11", "from=3&to=2"} {
			boot.call("GET", "/api/v1/alerts/events?"+q, nil).must(t, 400)
		}

		// Lifecycle: ack, note, resolve; 409s; 404.
		r = boot.call("POST", fmt.Sprintf("/api/v1/alerts/events/%d/ack", ids[1]), nil).must(t, 200)
		if !strings.Contains(r.body, `"state":"ack"`) {
			t.Errorf("ack: %s", r.body)
		}
		boot.call("POST", fmt.Sprintf("/api/v1/alerts/events/%d/ack", ids[1]), nil).must(t, 409)
		boot.call("POST", fmt.Sprintf("/api/v1/alerts/events/%d/note", ids[1]), `{"text":"  checking the host  "}`).must(t, 200)
		boot.call("POST", fmt.Sprintf("/api/v1/alerts/events/%d/note", ids[1]), `{"text":"  "}`).must(t, 400)
		r = boot.call("POST", fmt.Sprintf("/api/v1/alerts/events/%d/resolve", ids[1]), nil).must(t, 200)
		if !strings.Contains(r.body, `"state":"resolved"`) {
			t.Errorf("resolve: %s", r.body)
		}
		boot.call("POST", fmt.Sprintf("/api/v1/alerts/events/%d/resolve", ids[1]), nil).must(t, 409)
		boot.call("POST", "/api/v1/alerts/events/99999/ack", nil).must(t, 404)
		var detail struct {
			record.AlertEvent
			Notes []record.AlertNote `json:"notes"`
		}
		boot.call("GET", fmt.Sprintf("/api/v1/alerts/events/%d", ids[1]), nil).must(t, 200).decode(t, &detail)
		if detail.ID != ids[1] || detail.State != "resolved" || len(detail.Notes) != 1 || detail.Notes[0].Text != "checking the host" || detail.Notes[0].Author != "admin" {
			t.Errorf("detail: %+v", detail)
		}
		boot.call("GET", "/api/v1/alerts/events/99999", nil).must(t, 404)
		evs, err := h.db.ListAudit(ctx, store.AuditFilter{Action: "alert.*"})
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range evs {
			actions = append(actions, e.Action+" "+e.Target)
		}
		wantActions := fmt.Sprintf("[alert.resolve alert_events/%[1]d alert.note alert_events/%[1]d alert.ack alert_events/%[1]d]", ids[1])
		if fmt.Sprint(actions) != wantActions {
			t.Errorf("audit: %v, want %s", actions, wantActions)
		}

		// Silences: create, list, validation, delete.
		end := time.Now().Add(time.Hour).Unix()
		var sl record.AlertSilence
		boot.call("POST", "/api/v1/alerts/silences", map[string]any{"kind": "proc", "key": "4|*", "end": end, "comment": "maintenance"}).must(t, 200).decode(t, &sl)
		if sl.ID == 0 || sl.Kind != "proc" || sl.Key != "4|*" || sl.End != end || sl.Start == 0 || sl.CreatedBy != "admin" {
			t.Errorf("created silence: %+v", sl)
		}
		r = boot.call("POST", "/api/v1/alerts/silences", map[string]any{"end": 5})
		if r.code != 400 || r.body != `{"error":"end must be after start"}` {
			t.Errorf("silence ending before it starts: %d %s", r.code, r.body)
		}
		r = boot.call("GET", "/api/v1/alerts/silences", nil).must(t, 200)
		if !strings.Contains(r.body, `"comment":"maintenance"`) {
			t.Errorf("silences: %s", r.body)
		}
		boot.call("DELETE", fmt.Sprintf("/api/v1/alerts/silences/%d", sl.ID), nil).must(t, 200)
		boot.call("DELETE", fmt.Sprintf("/api/v1/alerts/silences/%d", sl.ID), nil).must(t, 404)
		if n, _ := h.db.ListAudit(ctx, store.AuditFilter{Action: "alert.silence.*"}); len(n) != 2 {
			t.Errorf("%d silence audit records, want 2", len(n))
		}

		// Site scope: a site-a token sees site a's events only, and
		// another site's event is 404 to it.
		var tok struct {
			Token string `json:"token"`
		}
		boot.call("POST", "/api/v1/tokens", map[string]string{"name": "site-a", "role": "admin", "site": "a"}).must(t, 200).decode(t, &tok)
		sc := h.client(t)
		sc.bearer = tok.Token
		sc.call("GET", "/api/v1/alerts/events", nil).must(t, 200).decode(t, &page)
		if len(page.Events) != 1 || page.Events[0].ID != ids[1] {
			t.Errorf("site a sees %+v", page.Events)
		}
		sc.call("POST", fmt.Sprintf("/api/v1/alerts/events/%d/ack", ids[2]), nil).must(t, 404)
		sc.call("GET", fmt.Sprintf("/api/v1/alerts/events/%d", ids[2]), nil).must(t, 404)
		var short []map[string]any
		sc.call("GET", "/api/alerts/events", nil).must(t, 200).decode(t, &short)
		if len(short) != 1 {
			t.Errorf("site a short list: %v", short)
		}
	})
}

// TestAlertWritesFailClosed: no audit record, no acknowledgement and no
// silence (RELIABILITY case 17); reads go on.
func TestAlertWritesFailClosed(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn)
		ids := seedAlerts(t, h.db)
		auditDown(t, h)
		boot.call("POST", fmt.Sprintf("/api/v1/alerts/events/%d/ack", ids[0]), nil).must(t, 500)
		boot.call("POST", "/api/v1/alerts/silences", map[string]any{"end": time.Now().Add(time.Hour).Unix()}).must(t, 500)
		if e, err := h.db.AlertEvent(context.Background(), ids[0]); err != nil || e.State != "firing" {
			t.Errorf("after a failed audit: %+v %v", e, err)
		}
		r := boot.call("GET", "/api/v1/alerts/silences", nil).must(t, 200)
		if r.body != "[]" {
			t.Errorf("silences: %s", r.body)
		}
	})
}
