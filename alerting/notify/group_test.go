package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestGroupTicket: the five members of one alert group (an incident)
// routed to the ticket channel open one ticket (sent in parallel), whose
// reference every member holds; a member joining later adopts it and
// sends nothing; a member resolving alone closes nothing; the group
// resolving closes the ticket once. On SQLite and PostgreSQL.
func TestGroupTicket(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			var db *store.DB
			if dialect == "sqlite" {
				db = storetest.OpenSQLite(t)
			} else {
				db = storetest.OpenPostgres(t)
			}
			testGroupTicket(t, db)
		})
	}
}

func testGroupTicket(t *testing.T, db *store.DB) {
	rec := &recorder{}
	var opened atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.ServeHTTP(&seqWriter{ResponseWriter: w, n: &opened}, r)
	}))
	defer srv.Close()
	ctx := context.Background()
	var evs []record.AlertEvent
	var ids []int64
	for i := range 6 {
		ev := portEvent
		ev.Key = fmt.Sprintf("agent1|203.0.113.%d:4444", i+1)
		ev.TS, ev.LastTS = portEvent.TS+int64(i), portEvent.TS+int64(i)
		stored, err := db.InsertAlertEvent(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		evs, ids = append(evs, stored), append(ids, stored.ID)
	}
	inc := record.Incident{Key: "r1|agent3", Rule: 1, AgentID: 3, Site: "paris", Severity: 9, Risk: 80, Title: "group",
		OpenedTS: portEvent.TS, UpdatedTS: portEvent.TS}
	inc, _, err := db.UpsertIncident(ctx, inc, ids[:5])
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.Parallel = 8
	box := newBox(Settings{TicketURL: srv.URL + "/itsm/tickets", TicketToken: "tok-1"})
	n, _ := startNotifier(t, db, cfg, box, Deps{})
	// Offered as the engine hands them over: fired before the
	// correlator grouped them (group_id 0 in the copy).
	for _, ev := range evs[:5] {
		n.Offer(ev)
	}
	waitDeliveries(t, db, record.DeliveryDelivered, 5, 10*time.Second)
	for _, id := range ids[:5] {
		if got, _ := db.AlertEvent(ctx, id); got.ExtRef != "INC-1" || got.GroupID != inc.ID {
			t.Errorf("event %d: ext_ref %q group %d, want INC-1 group %d", id, got.ExtRef, got.GroupID, inc.ID)
		}
	}
	// A sixth member joins the open incident: it adopts the ticket.
	if _, created, err := db.UpsertIncident(ctx, inc, ids[5:]); err != nil || created {
		t.Fatalf("join: created %v, %v", created, err)
	}
	if got, _ := db.AlertEvent(ctx, ids[5]); got.ExtRef != "INC-1" || got.GroupID != inc.ID {
		t.Errorf("joined event: ext_ref %q group %d", got.ExtRef, got.GroupID)
	}
	n.Offer(evs[5])
	waitDeliveries(t, db, record.DeliveryDelivered, 6, 10*time.Second)
	// One member resolving alone leaves the group's ticket open.
	one := evs[1]
	one.State, one.ResolvedTS = record.AlertResolved, 1764000500
	n.Offer(one)
	if !n.GroupResolved(inc.ID, 1764000600) {
		t.Fatal("group end dropped")
	}
	waitDeliveries(t, db, record.DeliveryDelivered, 7, 10*time.Second)
	_ = n.Stop() // stores what is still queued: nothing may be left
	all, err := db.Deliveries(ctx, store.DeliveryFilter{Limit: 100})
	if err != nil || len(all) != 7 {
		t.Fatalf("%d deliveries (%v), want 7: %+v", len(all), err, all)
	}

	reqs := rec.requests()
	if len(reqs) != 2 {
		for _, r := range reqs {
			t.Logf("%s %s", r.Header.Get("Idempotency-Key"), r.Body)
		}
		t.Fatalf("%d requests, want 2 (one open, one close)", len(reqs))
	}
	gid, first := itoa(inc.ID), itoa(ids[0])
	open := reqs[0]
	if open.Header.Get("Idempotency-Key") != "netmon-group-"+gid+"-open" || open.Header.Get("Authorization") != "Bearer tok-1" {
		t.Errorf("open: idem %q auth %q", open.Header.Get("Idempotency-Key"), open.Header.Get("Authorization"))
	}
	var body struct {
		Action  string `json:"action"`
		GroupID int64  `json:"group_id"`
		EventID int64  `json:"event_id"`
	}
	if err := json.Unmarshal(open.Body, &body); err != nil || body.Action != "open" || body.GroupID != inc.ID || !slices.Contains(ids[:5], body.EventID) {
		t.Errorf("open body %s", open.Body)
	}
	closeReq := reqs[1]
	if closeReq.Method != "POST" || closeReq.Path != "/itsm/tickets" || closeReq.Header.Get("Idempotency-Key") != "netmon-"+first+"-close" {
		t.Errorf("close: %s %s idem %q", closeReq.Method, closeReq.Path, closeReq.Header.Get("Idempotency-Key"))
	}
	want := `{"action":"close","event_id":` + first + `,"group_id":` + gid + `,"ext_ref":"INC-1","resolved_ts":1764000600}`
	if string(closeReq.Body) != want {
		t.Errorf("close body\n got %s\nwant %s", closeReq.Body, want)
	}
}

// seqWriter answers an open with the next ticket id (INC-1, INC-2, ...).
type seqWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *seqWriter) Write([]byte) (int, error) {
	return w.ResponseWriter.Write([]byte(fmt.Sprintf(`{"id":"INC-%d"}`, w.n.Add(1))))
}
