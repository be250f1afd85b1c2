package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/alerting/rules"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestLiveFeedScopedBySite is issue 28 item 5: the tick carried every
// site's alert events to site-bound users. Alert events of sites a and b
// and of the hub fire together; alice (site a) receives exactly a's, bob
// (site b) exactly b's, a global admin all three.
func TestLiveFeedScopedBySite(t *testing.T) {
	h, boot := bootstrap(t, storetestSQLite(t), func(c *config.HubConfig) { c.Auth.MultiSite = true })
	boot.createUser("alice", "alice-pass-1", "viewer", "a")
	boot.createUser("bob", "bob-pass-12", "viewer", "b")
	alice, bob := h.client(t), h.client(t)
	alice.login("alice", "alice-pass-1")
	bob.login("bob", "bob-pass-12")
	feeds := map[string]*feed{
		"alice": openFeed(t, h.base, "alice", alice.cookie),
		"bob":   openFeed(t, h.base, "bob", bob.cookie),
		"admin": openFeed(t, h.base, "admin", boot.cookie),
	}
	h.alerts.Raise(context.Background(),
		rules.Alert{Kind: "proc", Key: "1|nc", Message: "agent 1: new process nc", Severity: 4, Site: "a", AgentID: 1},
		rules.Alert{Kind: "proc", Key: "2|nc", Message: "agent 2: new process nc", Severity: 4, Site: "b", AgentID: 2},
		rules.Alert{Kind: "bw", Key: "hub|in", Message: "bandwidth in", Severity: 5})
	stored, err := h.db.ListAlertEvents(context.Background(), store.AlertFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, e := range stored {
		ids[e.Key] = e.ID
	}
	want := map[string][]int64{"alice": {ids["1|nc"]}, "bob": {ids["2|nc"]}, "admin": {ids["1|nc"], ids["2|nc"], ids["hub|in"]}}
	slices.Sort(want["admin"])
	for name, f := range feeds {
		got := f.alertIDs(len(want[name]))
		if name == "admin" {
			// The hub's own rules may add events of its host (site ""),
			// which a global admin gets too.
			got = slices.DeleteFunc(got, func(id int64) bool { return !slices.Contains(want[name], id) })
		}
		if fmt.Sprint(got) != fmt.Sprint(want[name]) {
			t.Errorf("%s received alert events %v, want %v", name, got, want[name])
		}
	}
}

// alertIDs reads ticks for two seconds, or until n alert events came,
// then one tick more (a leak would arrive in the same tick), and returns
// the ids of the alert events the feed received, sorted.
func (f *feed) alertIDs(n int) []int64 {
	f.t.Helper()
	var ids []int64
	deadline := time.Now().Add(2 * time.Second)
	extra := 1
	for time.Now().Before(deadline) && extra >= 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, raw, err := f.conn.Read(ctx)
		cancel()
		if err != nil {
			f.t.Fatalf("%s: %v", f.name, err)
		}
		var tick struct {
			AlertEvents []struct {
				ID int64 `json:"id"`
			} `json:"alert_events"`
		}
		if err := json.Unmarshal(raw, &tick); err != nil {
			f.t.Fatal(err)
		}
		for _, e := range tick.AlertEvents {
			ids = append(ids, e.ID)
		}
		if len(ids) >= n {
			extra--
		}
	}
	slices.Sort(ids)
	return ids
}

// TestMetricsAccess is issue 28 item 5: /metrics showed every site's
// agent names and traffic to any signed-in identity. Now only an admin
// that is not site-bound, or the scrape token, reads it.
func TestMetricsAccess(t *testing.T) {
	const scrape = "scrape-token-0123456789abcdef"
	h, boot := bootstrap(t, storetestSQLite(t), func(c *config.HubConfig) {
		c.Auth.MultiSite = true
		c.API.MetricsToken = scrape
	})
	// ada, an admin, ends the bootstrap session: created last.
	boot.createUser("vic", "viewer-pass-1", "viewer", "")
	boot.createUser("sam", "site-admin-pass-1", "site-admin", "a")
	boot.createUser("ada", "admin-pass-12", "admin", "")
	as := func(user, pass string) *client {
		c := h.client(t)
		c.login(user, pass)
		return c
	}
	bearer := func(tok string) *client {
		c := h.client(t)
		c.bearer = tok
		return c
	}
	const (
		noSession = `{"error":"oturum gerekli","auth_required":true,"message":"session required"}`
		siteBound = `{"error":"permission denied: this covers every site, and a site-bound identity sees only its own"}`
	)
	for _, tt := range []struct {
		desc string
		c    *client
		code int
		body string
	}{
		{"anonymous", h.client(t), 401, noSession},
		{"viewer", as("vic", "viewer-pass-1"), 403, `{"error":"permission denied: this needs the admin permission, which the role viewer lacks"}`},
		{"site-admin of site a", as("sam", "site-admin-pass-1"), 403, siteBound},
		{"wrong scrape token", bearer(scrape + "x"), 401, noSession},
		{"empty bearer", bearer(" "), 401, noSession},
		{"admin", as("ada", "admin-pass-12"), 200, ""},
		{"scrape token", bearer(scrape), 200, ""},
	} {
		r := tt.c.call("GET", "/metrics", nil)
		switch {
		case r.code != tt.code:
			t.Errorf("%s: %d %.200s, want %d", tt.desc, r.code, r.body, tt.code)
		case tt.code == 200 && !strings.Contains(r.body, "netmon_http_request_duration_seconds"):
			t.Errorf("%s: 200 without the metrics: %.200s", tt.desc, r.body)
		case tt.code != 200 && r.body != tt.body:
			t.Errorf("%s: body %s, want %s", tt.desc, r.body, tt.body)
		}
	}
	// The scrape token reads /metrics and nothing else.
	for _, path := range []string{"/api/status", "/api/v1/agents", "/api/v1/users"} {
		if r := bearer(scrape).call("GET", path, nil); r.code != 401 {
			t.Errorf("scrape token on %s: %d %s, want 401", path, r.code, r.body)
		}
	}
}

// TestNotFoundAlikeAcrossSites is issue 28 item 5: the alert and incident
// routes answered "not found" for another site's id and "no such ..." for
// a missing one. Both answers are now the same, byte for byte.
func TestNotFoundAlikeAcrossSites(t *testing.T) {
	h, boot := bootstrap(t, storetestSQLite(t), func(c *config.HubConfig) { c.Auth.MultiSite = true; c.Alerts.Enabled = false })
	ctx := context.Background()
	now := time.Now().Unix()
	var siteA []int64
	for _, e := range []record.AlertEvent{
		{Kind: "proc", Key: "7|nc", Message: "agent 7: new process nc", Severity: 4, Site: "a", AgentID: 7},
		{Kind: "ioc", Key: "7|x.evil.test", Message: "ioc", Severity: 8, Site: "a", AgentID: 7},
	} {
		e.TS, e.State = now, "firing"
		stored, err := h.db.InsertAlertEvent(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		siteA = append(siteA, stored.ID)
	}
	incs, err := h.incidents.RunOnce(ctx)
	if err != nil || len(incs) != 1 {
		t.Fatalf("correlation: %+v, %v", incs, err)
	}
	boot.createUser("bob", "bob-password-1", "netops", "b")
	bob := h.client(t)
	bob.login("bob", "bob-password-1")
	const missing = 999999
	for _, tt := range []struct {
		method, path string
		id           int64
		body         any
	}{
		{"GET", "/api/v1/alerts/events/%d", siteA[0], nil},
		{"POST", "/api/v1/alerts/events/%d/ack", siteA[0], nil},
		{"POST", "/api/v1/alerts/events/%d/resolve", siteA[0], nil},
		{"POST", "/api/v1/alerts/events/%d/note", siteA[0], map[string]string{"text": "mine now"}},
		{"GET", "/api/v1/incidents/%d", incs[0].ID, nil},
		{"POST", "/api/v1/incidents/%d/ack", incs[0].ID, nil},
		{"POST", "/api/v1/incidents/%d/investigate", incs[0].ID, nil},
		{"POST", "/api/v1/incidents/%d/resolve", incs[0].ID, nil},
		{"POST", "/api/v1/incidents/%d/close", incs[0].ID, nil},
	} {
		other := bob.call(tt.method, fmt.Sprintf(tt.path, tt.id), tt.body)
		none := bob.call(tt.method, fmt.Sprintf(tt.path, missing), tt.body)
		if other.code != 404 || other.code != none.code || other.body != none.body {
			t.Errorf("%s %s: another site's id answers %d %s, a missing one %d %s", tt.method, tt.path, other.code, other.body, none.code, none.body)
		}
	}
	// Nothing of site a changed.
	for _, id := range siteA {
		ev, err := h.db.AlertEvent(ctx, id)
		if err != nil || ev.State != "firing" {
			t.Errorf("site a's event %d: %+v, %v", id, ev, err)
		}
	}
}

// TestISMSWritesRefusedToSiteBound is issue 28 item 6: a site-admin
// created and overwrote the organisation's ISMS registers. Every
// site-bound identity is refused both writes (403, audited as denied),
// the register is unchanged, and it still reads them.
func TestISMSWritesRefusedToSiteBound(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		asset := map[string]any{"ref": "AS-1", "asset": map[string]any{"name": "core firewall", "type": "hardware", "owner": "netops", "classification": "confidential"}}
		var created struct {
			ID int64 `json:"id"`
		}
		boot.call("POST", "/api/v1/isms/assets", asset).must(t, 200).decode(t, &created)
		before := boot.call("GET", "/api/v1/isms/assets", nil).must(t, 200).body

		boot.createUser("sam", "site-admin-pass-1", "site-admin", "a")
		sam := h.client(t)
		sam.login("sam", "site-admin-pass-1")
		var tok struct {
			Token string `json:"token"`
		}
		sam.call("POST", "/api/v1/tokens", map[string]string{"name": "sam-script", "role": "site-admin"}).must(t, 200).decode(t, &tok)
		script := h.client(t)
		script.bearer = tok.Token
		overwrite := map[string]any{"asset": map[string]any{"name": "nothing to see", "type": "hardware", "owner": "site a", "classification": "public"}}
		const refused = `{"error":"permission denied: this covers every site, and a site-bound identity sees only its own"}`
		for _, who := range []struct {
			name string
			c    *client
		}{{"site-admin session", sam}, {"site-admin token", script}} {
			for _, r := range []response{
				who.c.call("POST", "/api/v1/isms/assets", map[string]any{"ref": "AS-2", "asset": overwrite["asset"]}),
				who.c.call("POST", "/api/v1/isms/risks", map[string]any{"ref": "R-1"}),
				who.c.call("PUT", fmt.Sprintf("/api/v1/isms/assets/%d", created.ID), overwrite),
			} {
				if r.code != 403 || r.body != refused {
					t.Errorf("%s: %d %s, want 403 %s", who.name, r.code, r.body, refused)
				}
			}
			who.c.call("GET", "/api/v1/isms/assets", nil).must(t, 200)
		}
		if after := boot.call("GET", "/api/v1/isms/assets", nil).must(t, 200).body; after != before {
			t.Errorf("the register changed:\n%s\nwas\n%s", after, before)
		}
		denied, err := h.db.ListAudit(context.Background(), store.AuditFilter{Action: "access.denied", Actor: "sam"})
		if err != nil {
			t.Fatal(err)
		}
		if len(denied) != 3 {
			t.Errorf("%d access.denied records for sam's session, want 3: %+v", len(denied), denied)
		}
	})
}

// TestReenrollAcrossSitesRefused is issue 28 item 9: a hello with another
// site's agent machine_id deleted that agent with its data. It is
// refused (403, audited as denied); the other site's agent, its history
// and its token stay, and the refused token's use is not taken.
func TestReenrollAcrossSitesRefused(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		_, tokA := createEnrollToken(t, admin, map[string]any{"name": "a", "site": "a", "max_uses": 0})
		idB, tokB := createEnrollToken(t, admin, map[string]any{"name": "b", "site": "b", "max_uses": 1})
		a := enrolled(t, hello(t, h, tokA, wire.Hello{Name: "db-a", MachineID: "m-shared"}))
		now := time.Now().Unix()
		for i, ts := range []int64{now - 60, now - 30} {
			body := wire.Telemetry{TS: ts, Seq: uint64(i + 1), Interfaces: []wire.Interface{{Name: "eth0", RxBytes: uint64(1000 * (i + 1)), TxBytes: uint64(1000 * (i + 1))}}}
			telemetry(t, h, a.AgentToken, body).must(t, 200)
		}
		eventually(t, "site a's agent history", func() bool { return len(agentHistory(t, admin, a.AgentID)) == 1 })

		r := hello(t, h, tokB, wire.Hello{Name: "db-b", MachineID: "m-shared"})
		const want = `{"error":"this machine (machine_id) is enrolled as an agent of another site: an admin of that site (or a global admin) must delete that agent before it enrolls here"}`
		if r.code != 403 || r.body != want {
			t.Fatalf("cross-site re-enroll: %d %s, want 403 %s", r.code, r.body, want)
		}
		var agents []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
			Site string `json:"site"`
		}
		admin.call("GET", "/api/v1/agents", nil).must(t, 200).decode(t, &agents)
		if len(agents) != 1 || agents[0].ID != a.AgentID || agents[0].Site != "a" || agents[0].Name != "db-a" {
			t.Errorf("agents after the refusal: %+v, want only site a's agent %d", agents, a.AgentID)
		}
		if n := len(agentHistory(t, admin, a.AgentID)); n != 1 {
			t.Errorf("site a's agent has %d history points after the refusal, want 1", n)
		}
		telemetry(t, h, a.AgentToken, wire.Telemetry{TS: now, Seq: 3}).must(t, 200)
		refused, err := h.db.ListAudit(context.Background(), store.AuditFilter{Action: "enroll_token.used", Result: "denied"})
		if err != nil {
			t.Fatal(err)
		}
		if len(refused) != 1 || refused[0].Target != fmt.Sprintf("agent:%d", a.AgentID) ||
			!strings.Contains(refused[0].Detail, fmt.Sprintf(`enroll token %d (b)`, idB)) || !strings.Contains(refused[0].Detail, `of site "a", not of site "b"`) {
			t.Errorf("audit of the refusal: %+v", refused)
		}
		// The refused hello took no use of the single-use token: it
		// enrolls another machine.
		enrolled(t, hello(t, h, tokB, wire.Hello{Name: "db-b", MachineID: "m-b"}))
		// The same machine re-enrolling in its own site still replaces
		// its agent.
		again := enrolled(t, hello(t, h, tokA, wire.Hello{Name: "db-a", MachineID: "m-shared"}))
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", a.AgentID), nil).must(t, 404)
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", again.AgentID), nil).must(t, 200)
	})
}
