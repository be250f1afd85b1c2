package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestIncidentTicket: through the hub's wiring, an agent's two events
// grouped by the correlation engine open one ticket at a local ITSM
// server; resolving the incident through the API closes it, and closing
// the resolved incident sends nothing more. On both databases.
func TestIncidentTicket(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		var mu sync.Mutex
		var actions []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			var body struct {
				Action  string `json:"action"`
				GroupID int64  `json:"group_id"`
				ExtRef  string `json:"ext_ref"`
			}
			_ = json.Unmarshal(b, &body)
			mu.Lock()
			actions = append(actions, fmt.Sprintf("%s g%d %s", body.Action, body.GroupID, body.ExtRef))
			mu.Unlock()
			_, _ = w.Write([]byte(`{"id":"CHG-77"}`))
		}))
		defer srv.Close()
		seen := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), actions...) }
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) {
			c.Outbound.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
			c.Notify.Poll = 100 * time.Millisecond
		})
		boot.call("PUT", "/api/alerts", map[string]any{"notifiers": map[string]any{"ticket_url": srv.URL + "/itsm", "ticket_token": "t"}}).must(t, 200)
		ctx := context.Background()
		now := time.Now().Unix()
		var evs []record.AlertEvent
		for _, e := range []record.AlertEvent{
			{Kind: "proc", Key: "7|nc", Message: "new process nc", Severity: 4, Site: "a", AgentID: 7},
			{Kind: "ioc", Key: "7|x.evil.test", Message: "ioc", Severity: 8, Site: "a", AgentID: 7},
		} {
			e.TS, e.LastTS, e.State = now, now, "firing"
			stored, err := h.db.InsertAlertEvent(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, stored)
		}
		incs, err := h.incidents.RunOnce(ctx)
		if err != nil || len(incs) != 1 {
			t.Fatalf("correlation: %+v, %v", incs, err)
		}
		id := incs[0].ID
		for _, ev := range evs {
			h.notifier.Offer(ev)
		}
		waitTickets := func(n int) {
			t.Helper()
			deadline := time.Now().Add(10 * time.Second)
			for {
				ds, err := h.db.Deliveries(ctx, store.DeliveryFilter{Channel: "ticket", Status: record.DeliveryDelivered})
				if err != nil {
					t.Fatal(err)
				}
				if len(ds) >= n {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d ticket deliveries, want %d; ITSM saw %v", len(ds), n, seen())
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		waitTickets(2)
		for _, ev := range evs {
			if got, _ := h.db.AlertEvent(ctx, ev.ID); got.GroupID != id || got.ExtRef != "CHG-77" {
				t.Errorf("event %d: group %d ext_ref %q", ev.ID, got.GroupID, got.ExtRef)
			}
		}
		boot.call("POST", fmt.Sprintf("/api/v1/incidents/%d/resolve", id), nil).must(t, 200)
		waitTickets(3)
		boot.call("POST", fmt.Sprintf("/api/v1/incidents/%d/close", id), nil).must(t, 200)
		time.Sleep(500 * time.Millisecond) // five polls: a second close would be sent by now
		want := []string{fmt.Sprintf("open g%d ", id), fmt.Sprintf("close g%d CHG-77", id)}
		if got := seen(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ITSM saw %q, want %q", got, want)
		}
	})
}
