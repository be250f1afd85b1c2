package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"netmon/store/record"
	"netmon/store/storetest"
)

// TestTicket: an event opens a ticket at a local ITSM receiver (exact
// request), its answer's id becomes the event's ext_ref, and the event
// resolving closes that ticket.
func TestTicket(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.ServeHTTP(&idWriter{ResponseWriter: w}, r)
	}))
	defer srv.Close()
	db := storetest.OpenSQLite(t)
	ctx := context.Background()
	stored, err := db.InsertAlertEvent(ctx, portEvent)
	if err != nil {
		t.Fatal(err)
	}
	box := newBox(Settings{TicketURL: srv.URL + "/itsm/tickets", TicketToken: "tok-1"})
	n, _ := startNotifier(t, db, testConfig(), box, Deps{})
	n.Offer(stored)
	waitDeliveries(t, db, record.DeliveryDelivered, 1, 10*time.Second)
	got, _ := db.AlertEvent(ctx, stored.ID)
	if got.ExtRef != "INC-1" {
		t.Fatalf("ext_ref %q, want INC-1", got.ExtRef)
	}
	resolved := stored
	resolved.State, resolved.ResolvedTS = record.AlertResolved, 1764000600
	n.Offer(resolved)
	waitDeliveries(t, db, record.DeliveryDelivered, 2, 10*time.Second)

	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	id := itoa(stored.ID)
	want := []struct{ idem, body string }{
		{"netmon-" + id + "-open", `{"action":"open","event_id":` + id + `,"title":"netmon: Suspicious remote port: connection to 203.0.113.9:4444","description":"connection to 203.0.113.9:4444\n\nKind:     port (Suspicious remote port)\nSeverity: 9\nKey:      agent1|203.0.113.9:4444\nSite:     paris\nFired:    2025-11-24T16:00:00Z\nEvent:    ` + id + `\n","severity":9,"kind":"port","key":"agent1|203.0.113.9:4444","site":"paris","group_id":0,"ts":1764000000}`},
		{"netmon-" + id + "-close", `{"action":"close","event_id":` + id + `,"group_id":0,"ext_ref":"INC-1","resolved_ts":1764000600}`},
	}
	for i, w := range want {
		r := reqs[i]
		if r.Method != "POST" || r.Path != "/itsm/tickets" || r.Header.Get("Authorization") != "Bearer tok-1" ||
			r.Header.Get("Idempotency-Key") != w.idem || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d: %s %s auth %q idem %q", i, r.Method, r.Path, r.Header.Get("Authorization"), r.Header.Get("Idempotency-Key"))
		}
		if string(r.Body) != w.body {
			t.Errorf("request %d body:\n got %s\nwant %s", i, r.Body, w.body)
		}
	}
}

// idWriter answers every request with a ticket id.
type idWriter struct{ http.ResponseWriter }

func (w *idWriter) Write([]byte) (int, error) {
	return w.ResponseWriter.Write([]byte(`{"id":"INC-1"}`))
}

func itoa(i int64) string { return strconvFormat(i) }
