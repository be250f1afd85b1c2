package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"netmon/alerting"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// loopbackNotify lets the notifier reach the test's own receivers.
func loopbackNotify(c *config.HubConfig) {
	c.Outbound.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	c.Notify.Poll = 100 * time.Millisecond
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestAlertSecretsReachNoReader (issue 28 item 3, RELIABILITY case 30):
// a SIEM HTTP target and a webhook URL carrying credentials are masked in
// GET /api/alerts, sealed in the settings rows, masked in the audit
// record, and the delivery errors a viewer and a site-bound token read in
// the alert detail name the failure only; on both databases.
func TestAlertSecretsReachNoReader(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, loopbackNotify, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		ctx := context.Background()
		addr := closedAddr(t)
		secrets := []string{"SIEM-PW", "SIEM-KEY", "SIEM-TOKEN", "GEN-TOKEN", "/ingest", "/hook", addr}
		boot.call("PUT", "/api/alerts", map[string]any{"notifiers": map[string]any{
			"generic_url": "http://" + addr + "/hook?token=GEN-TOKEN",
			"siem": map[string]any{"enabled": true, "transport": "http", "format": "json",
				"target": "http://siemuser:SIEM-PW@" + addr + "/ingest?key=SIEM-KEY", "token": "Bearer SIEM-TOKEN"},
		}}).must(t, 200)

		// GET /api/alerts: the target and the URL masked like the token.
		var cfg struct {
			Notifiers json.RawMessage `json:"notifiers"`
		}
		boot.call("GET", "/api/alerts", nil).must(t, 200).decode(t, &cfg)
		want := `{"desktop":false,"generic_url":"********","chatapp1_url":"","chatapp2_url":"","messenger_token":"","messenger_chat_id":"","teamchat_url":"","webhook_v2_url":"","webhook_v2_secret":"","email_host":"","email_port":0,"email_from":"","email_to":[],"email_user":"","email_pass":"","siem":{"enabled":true,"format":"json","transport":"http","target":"********","token":"********","insecure":false,"framing":""},"ticket_url":"","ticket_token":""}`
		if string(cfg.Notifiers) != want {
			t.Errorf("GET /api/alerts notifiers:\n got %s\nwant %s", cfg.Notifiers, want)
		}

		// At rest: no settings row holds them in clear.
		rows, err := h.db.Reader().QueryContext(ctx, `SELECT key, value FROM settings`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			for _, s := range secrets {
				if strings.Contains(v, s) {
					t.Errorf("settings row %s holds %q in clear", k, s)
				}
			}
		}
		rows.Close()

		// The audit record: before and after masked (a field named like a
		// secret, the token, by the audit package's own "***").
		evs, err := h.db.ListAudit(ctx, store.AuditFilter{Action: "alerts.update"})
		if err != nil || len(evs) != 1 {
			t.Fatalf("%d alerts.update records (%v), want 1", len(evs), err)
		}
		var after struct {
			Notifiers struct {
				GenericURL string `json:"generic_url"`
				SIEM       struct {
					Target string `json:"target"`
					Token  string `json:"token"`
				} `json:"siem"`
			} `json:"notifiers"`
		}
		if err := json.Unmarshal([]byte(evs[0].AfterJSON), &after); err != nil {
			t.Fatal(err)
		}
		if n := after.Notifiers; n.GenericURL != "********" || n.SIEM.Target != "********" || n.SIEM.Token != "***" {
			t.Errorf("audit after_json: %+v", n)
		}
		for _, s := range secrets {
			if strings.Contains(evs[0].BeforeJSON+evs[0].AfterJSON, s) {
				t.Errorf("the audit record shows %q", s)
			}
		}

		// An event of site a fails on both channels (nothing listens).
		ev, err := h.db.InsertAlertEvent(ctx, record.AlertEvent{TS: 1000, Kind: "port", Key: "3|198.51.100.7:4444",
			Message: "m", Severity: 9, State: "firing", Site: "a", AgentID: 3})
		if err != nil {
			t.Fatal(err)
		}
		h.notifier.Offer(ev)
		deadline := time.Now().Add(15 * time.Second)
		for {
			ds, err := h.db.Deliveries(ctx, store.DeliveryFilter{EventID: ev.ID})
			if err != nil {
				t.Fatal(err)
			}
			tried := 0
			for _, d := range ds {
				if d.Attempts > 0 {
					tried++
				}
			}
			if tried == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries %+v, want both tried", ds)
			}
			time.Sleep(50 * time.Millisecond)
		}

		// A viewer and a site-bound viewer token read the detail.
		boot.createUser("viewer1", "viewer-pass-1", "viewer", "")
		viewer := h.client(t)
		viewer.login("viewer1", "viewer-pass-1")
		var tok struct {
			Token string `json:"token"`
		}
		boot.call("POST", "/api/v1/tokens", map[string]string{"name": "site-a-viewer", "role": "viewer", "site": "a"}).must(t, 200).decode(t, &tok)
		siteBound := h.client(t)
		siteBound.bearer = tok.Token
		for name, c := range map[string]*client{"viewer": viewer, "site-bound token": siteBound} {
			r := c.call("GET", fmt.Sprintf("/api/v1/alerts/events/%d", ev.ID), nil).must(t, 200)
			for _, s := range secrets {
				if strings.Contains(r.body, s) {
					t.Errorf("%s reads %q in %s", name, s, r.body)
				}
			}
			var detail struct {
				Deliveries []record.AlertDelivery `json:"deliveries"`
			}
			r.decode(t, &detail)
			var got []string
			for _, d := range detail.Deliveries {
				got = append(got, d.Channel+":"+d.Status+":"+d.Error)
			}
			sort.Strings(got)
			if want := "generic_url:pending:connection refused siem:pending:connection refused"; strings.Join(got, " ") != want {
				t.Errorf("%s reads deliveries %q, want %q", name, strings.Join(got, " "), want)
			}
			c.call("GET", "/api/alerts", nil).must(t, 403)
		}

		// A row stored before the reasons existed quoted the URL: it
		// reads as "delivery failed".
		old, err := h.db.InsertAlertEvent(ctx, record.AlertEvent{TS: 1001, Kind: "port", Key: "3|198.51.100.8:4444",
			Message: "m", Severity: 9, State: "firing", Site: "a", AgentID: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.db.InsertDeliveries(ctx, []record.AlertDelivery{{EventID: old.ID, Channel: "siem", Status: record.DeliveryFailed,
			CreatedTS: 1001, NextTS: 1001, UpdatedTS: 1001, Event: old}}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.db.Writer().ExecContext(ctx, `UPDATE alert_deliveries SET error = $1 WHERE event_id = $2`,
			`siem post: Post "http://siemuser:***@`+addr+`/ingest?key=SIEM-KEY": dial tcp `+addr+`: connect: connection refused`, old.ID); err != nil {
			t.Fatal(err)
		}
		r := siteBound.call("GET", fmt.Sprintf("/api/v1/alerts/events/%d", old.ID), nil).must(t, 200)
		if !strings.Contains(r.body, `"status":"failed","attempts":0,`) || !strings.Contains(r.body, `"error":"delivery failed"}]`) || strings.Contains(r.body, "SIEM-KEY") {
			t.Errorf("an older row reads %s", r.body)
		}
		r = boot.call("GET", "/api/v1/alerts/deliveries?status=failed", nil).must(t, 200)
		if !strings.Contains(r.body, `"error":"delivery failed"}`) || strings.Contains(r.body, "SIEM-KEY") {
			t.Errorf("the delivery log reads %s", r.body)
		}
	})
}

// receiver records the Authorization header of each request it gets.
type receiver struct {
	mu   sync.Mutex
	auth []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (r *receiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.auth...)
}

// TestAlertSecretRepoint (issue 28 item 4, RELIABILITY case 30): a
// masked credential does not follow its channel to a new destination.
// The SIEM token is sent to a real local receiver; re-pointing the target
// while keeping the mask (or leaving the token out) is refused with a 400
// naming the token and the new host receives nothing; cleared, the new
// host gets no Authorization header; given again, it gets the new one.
// The e-mail password, the ticket token and the webhook secret follow the
// same rule, and an empty string clears a URL or a secret.
func TestAlertSecretRepoint(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		legit, attacker := &receiver{}, &receiver{}
		legitSrv, attackerSrv := httptest.NewServer(legit), httptest.NewServer(attacker)
		defer legitSrv.Close()
		defer attackerSrv.Close()
		h, boot := bootstrap(t, dsn, loopbackNotify)
		ctx := context.Background()
		boot.call("PUT", "/api/alerts", map[string]any{"notifiers": map[string]any{
			"generic_url": legitSrv.URL + "/generic",
			"siem":        map[string]any{"enabled": true, "transport": "http", "format": "json", "target": legitSrv.URL + "/ingest", "token": "Bearer SIEM-TOKEN"},
			"email_host":  "127.0.0.1", "email_port": 2525, "email_from": "netmon@example.test", "email_to": []string{"noc@example.test"},
			"email_user": "u", "email_pass": "MAIL-PW",
			"ticket_url": legitSrv.URL + "/ticket", "ticket_token": "TICKET-TOKEN",
			"webhook_v2_url": legitSrv.URL + "/wh", "webhook_v2_secret": "WH-SECRET",
		}}).must(t, 200)
		test := func(channel, want string) {
			t.Helper()
			r := boot.call("POST", "/api/v1/alerts/channels/"+channel+"/test", nil).must(t, 200)
			if r.body != want {
				t.Errorf("test %s: %s, want %s", channel, r.body, want)
			}
		}
		test("siem", `{"channel":"siem","ok":true,"error":""}`)
		stored, err := alerting.NewSettingsRows(h.db, h.vault).Load(ctx)
		if err != nil {
			t.Fatal(err)
		}

		refusal := func(field string) string {
			return `{"error":"notifiers.` + field + `: the destination changed: send the secret again, or \"\" to clear it"}`
		}
		for _, tt := range []struct {
			desc, body, field string
		}{
			{"siem target, token masked", `{"notifiers":{"siem":{"target":"` + attackerSrv.URL + `/x","token":"********"}}}`, "siem.token"},
			{"siem target, token left out", `{"notifiers":{"siem":{"target":"` + attackerSrv.URL + `/x"}}}`, "siem.token"},
			{"siem target, token null", `{"notifiers":{"siem":{"target":"` + attackerSrv.URL + `/x","token":null}}}`, "siem.token"},
			{"siem certificate checks off", `{"notifiers":{"siem":{"insecure":true,"token":"********"}}}`, "siem.token"},
			{"email host", `{"notifiers":{"email_host":"127.0.0.2","email_pass":"********"}}`, "email_pass"},
			{"email port", `{"notifiers":{"email_port":2526}}`, "email_pass"},
			{"ticket url", `{"notifiers":{"ticket_url":"` + attackerSrv.URL + `/t","ticket_token":"********"}}`, "ticket_token"},
			{"webhook v2 url", `{"notifiers":{"webhook_v2_url":"` + attackerSrv.URL + `/w"}}`, "webhook_v2_secret"},
		} {
			r := boot.call("PUT", "/api/alerts", tt.body)
			if r.code != 400 || r.body != refusal(tt.field) {
				t.Errorf("%s: %d %s, want 400 %s", tt.desc, r.code, r.body, refusal(tt.field))
			}
		}
		// Nothing changed, and the destinations kept masked are no change.
		boot.call("PUT", "/api/alerts", `{"notifiers":{"siem":{"target":"********","token":"********"},"ticket_url":"********","webhook_v2_url":"********","email_host":"127.0.0.1","email_port":2525}}`).must(t, 200)
		if s, err := alerting.NewSettingsRows(h.db, h.vault).Load(ctx); err != nil || fmt.Sprint(s) != fmt.Sprint(stored) {
			t.Errorf("after the refusals:\n got %+v\nwant %+v (%v)", s, stored, err)
		}
		test("siem", `{"channel":"siem","ok":true,"error":""}`)
		if got := attacker.got(); len(got) != 0 {
			t.Errorf("the new host received %d requests: %q", len(got), got)
		}
		if got := legit.got(); fmt.Sprint(got) != "[Bearer SIEM-TOKEN Bearer SIEM-TOKEN]" {
			t.Errorf("the SIEM received %q", got)
		}

		// Re-pointed with the token cleared: no Authorization at the new
		// host; then a token given for it is sent there.
		boot.call("PUT", "/api/alerts", `{"notifiers":{"siem":{"target":"`+attackerSrv.URL+`/x","token":""}}}`).must(t, 200)
		test("siem", `{"channel":"siem","ok":true,"error":""}`)
		boot.call("PUT", "/api/alerts", `{"notifiers":{"siem":{"token":"Bearer NEW-TOKEN"}}}`).must(t, 200)
		test("siem", `{"channel":"siem","ok":true,"error":""}`)
		if got := attacker.got(); fmt.Sprint(got) != "[ Bearer NEW-TOKEN]" {
			t.Errorf("the new host received %q, want no Authorization then the new token", got)
		}

		// An empty string clears a URL and a secret; the channel is off.
		boot.call("PUT", "/api/alerts", `{"notifiers":{"generic_url":"","ticket_token":"","email_pass":""}}`).must(t, 200)
		var cfg struct {
			Notifiers map[string]any `json:"notifiers"`
		}
		boot.call("GET", "/api/alerts", nil).must(t, 200).decode(t, &cfg)
		got := fmt.Sprintf("%q %q %q %q", cfg.Notifiers["generic_url"], cfg.Notifiers["ticket_token"], cfg.Notifiers["email_pass"], cfg.Notifiers["ticket_url"])
		if want := `"" "" "" "********"`; got != want {
			t.Errorf("after clearing: generic_url, ticket_token, email_pass, ticket_url = %s, want %s", got, want)
		}
		test("generic_url", `{"channel":"generic_url","ok":false,"error":"channel not configured"}`)
	})
}
