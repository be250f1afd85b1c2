package hub

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestAlertDelivery: routing rules through the API (admin, audited),
// events routed by them to local receivers, the delivery log, and the
// "send test" that reports the remote status but never its body; on
// both databases.
func TestAlertDelivery(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		var mu sync.Mutex
		got := map[string][]string{} // path -> bodies
		status := http.StatusOK
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got[r.URL.Path] = append(got[r.URL.Path], string(b))
			st := status
			mu.Unlock()
			w.WriteHeader(st)
			_, _ = w.Write([]byte("remote secret body"))
		}))
		defer srv.Close()
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) {
			c.Outbound.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
			c.Notify.Poll = 100 * time.Millisecond
		})
		boot.call("PUT", "/api/alerts", map[string]any{"notifiers": map[string]any{
			"generic_url": srv.URL + "/generic", "chatapp1_url": srv.URL + "/chat1"}}).must(t, 200)

		r := boot.call("POST", "/api/v1/alerts/routes", map[string]any{"min_severity": 9, "channels": []string{"chatapp1"}}).must(t, 200)
		if want := `{"id":"1","min_severity":9,"kinds":null,"sites":null,"channels":["chatapp1"],"continue":false}`; r.body != want {
			t.Errorf("create route:\n got %s\nwant %s", r.body, want)
		}
		boot.call("POST", "/api/v1/alerts/routes", map[string]any{"kinds": []string{"proc"}, "channels": []string{}}).must(t, 200)
		boot.call("PUT", "/api/v1/alerts/routes/1", map[string]any{"min_severity": 9, "channels": []string{"chatapp1", "generic_url"}}).must(t, 200)
		boot.call("DELETE", "/api/v1/alerts/routes/9", nil).must(t, 404)
		boot.call("POST", "/api/v1/alerts/routes", map[string]any{"channels": []string{"pager"}}).must(t, 400)
		r = boot.call("GET", "/api/v1/alerts/routes", nil).must(t, 200)
		if want := `[{"id":"1","min_severity":9,"kinds":null,"sites":null,"channels":["chatapp1","generic_url"],"continue":false},{"id":"2","min_severity":0,"kinds":["proc"],"sites":null,"channels":[],"continue":false}]`; r.body != want {
			t.Errorf("routes:\n got %s\nwant %s", r.body, want)
		}

		// Three events: port (9) by rule 1 to both, proc dropped by rule
		// 2, bw (5) by no rule: every enabled channel.
		ctx := context.Background()
		var ids []int64
		for _, e := range []record.AlertEvent{
			{TS: 1000, Kind: "port", Key: "k1", Message: "m1", Severity: 9, State: "firing"},
			{TS: 1001, Kind: "proc", Key: "k2", Message: "m2", Severity: 4, State: "firing"},
			{TS: 1002, Kind: "bw", Key: "k3", Message: "m3", Severity: 5, State: "firing"},
		} {
			ev, err := h.db.InsertAlertEvent(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, ev.ID)
			h.notifier.Offer(ev)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			ds, err := h.db.Deliveries(ctx, store.DeliveryFilter{Status: record.DeliveryDelivered})
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) == 4 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d deliveries delivered, want 4", len(ds))
			}
			time.Sleep(50 * time.Millisecond)
		}
		var log []record.AlertDelivery
		r = boot.call("GET", "/api/v1/alerts/deliveries?status=delivered", nil).must(t, 200)
		// Case 30: the log carries no channel URL (its path is the
		// credential) and no remote body.
		if strings.Contains(r.body, srv.URL) || strings.Contains(r.body, "/chat1") || strings.Contains(r.body, "remote secret body") {
			t.Errorf("delivery log leaks a URL or the remote body: %s", r.body)
		}
		r.decode(t, &log)
		var rows []string
		for _, d := range log {
			rows = append(rows, fmt.Sprintf("%d:%s:%s:%d", d.EventID, d.Channel, d.Route, d.Attempts))
		}
		want := fmt.Sprintf("%d:chatapp1::1 %d:generic_url::1 %d:generic_url:1:1 %d:chatapp1:1:1", ids[2], ids[2], ids[0], ids[0])
		if strings.Join(rows, " ") != want {
			t.Errorf("delivery log %s, want %s", strings.Join(rows, " "), want)
		}
		// The alert detail shows the route the event took.
		var detail struct {
			Deliveries []record.AlertDelivery `json:"deliveries"`
		}
		boot.call("GET", fmt.Sprintf("/api/v1/alerts/events/%d", ids[0]), nil).must(t, 200).decode(t, &detail)
		var routeOf []string
		for _, d := range detail.Deliveries {
			routeOf = append(routeOf, d.Channel+"@"+d.Route+":"+d.Status)
		}
		if want := "generic_url@1:delivered chatapp1@1:delivered"; strings.Join(routeOf, " ") != want {
			t.Errorf("detail deliveries %s, want %s", strings.Join(routeOf, " "), want)
		}
		mu.Lock()
		if len(got["/generic"]) != 2 || len(got["/chat1"]) != 2 {
			t.Errorf("receiver got %d generic and %d chat posts, want 2 and 2", len(got["/generic"]), len(got["/chat1"]))
		}
		mu.Unlock()

		// Send test: ok, then a 500 reported by status, never the body.
		r = boot.call("POST", "/api/v1/alerts/channels/generic_url/test", nil).must(t, 200)
		if want := `{"channel":"generic_url","ok":true,"error":""}`; r.body != want {
			t.Errorf("test: %s, want %s", r.body, want)
		}
		mu.Lock()
		status = http.StatusInternalServerError
		mu.Unlock()
		r = boot.call("POST", "/api/v1/alerts/channels/generic_url/test", nil).must(t, 200)
		if want := `{"channel":"generic_url","ok":false,"error":"remote answered 500 internal server error"}`; r.body != want {
			t.Errorf("failed test: %s, want %s", r.body, want)
		}
		r = boot.call("GET", "/api/v1/audit?limit=100", nil).must(t, 200)
		for _, a := range []string{"alert.route.create", "alert.route.update", "alert.channel.test"} {
			if !strings.Contains(r.body, `"`+a+`"`) {
				t.Errorf("audit has no %s record", a)
			}
		}
		if strings.Contains(r.body, "remote secret body") {
			t.Error("the remote body reached the audit chain")
		}
	})
}
