package hub

import (
	"bufio"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/app/ai/provider/providertest"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/storetest"
)

// TestAIOff: without -ai, status is exactly {"enabled":false} and every
// other assistant route answers 404 saying how to turn it on.
func TestAIOff(t *testing.T) {
	_, boot := bootstrap(t, filepath.Join(t.TempDir(), "netmon.db"))
	if r := boot.call("GET", "/api/v1/ai/status", nil).must(t, 200); r.body != `{"enabled":false}` {
		t.Errorf("status off: %s", r.body)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/ai/presets"}, {"GET", "/api/v1/ai/conversations"}, {"GET", "/api/v1/ai/providers"},
		{"POST", "/api/v1/ai/conversations/1/messages"},
	} {
		r := boot.call(c.method, c.path, map[string]any{"content": "x"})
		if r.code != 404 || r.body != `{"error":"the AI assistant is off on this hub (start the hub with -ai)"}` {
			t.Errorf("%s %s off: %d %s", c.method, c.path, r.code, r.body)
		}
	}
}

// TestAIThroughTheHub: a provider added by the admin (its key never in
// an answer, a log line or an audit record), the RBAC of spec 5.7, and a
// conversation whose answer streams as the exact SSE of spec 6.2, is
// stored and audited.
func TestAIThroughTheHub(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.AI.Enabled = true; c.Auth.MultiSite = true })
		viewer, analyst, siteA := reportUsers(t, h, boot)
		const secret = "sk-hub-SECRET-4711"
		fake := providertest.New(t, "cloud-a")
		fake.RequireKey(secret)
		fake.Push(providertest.Script{Chunks: providertest.Stream("cloud-a", providertest.Answer{TokensIn: 12, TokensOut: 2,
			Parts: []providertest.Part{{Reasoning: "let me think"}, {Text: "Hello "}, {Text: "world"}}})})

		body := map[string]any{"name": "lab", "kind": "cloud-a", "base_url": fake.URL, "api_key": secret, "default_model": "fake-small"}
		for name, c := range map[string]*client{"analyst": analyst, "site-admin": siteA} {
			if r := c.call("POST", "/api/v1/ai/providers", body); r.code != 403 {
				t.Errorf("%s adding a provider: %d %s (needs global-admin)", name, r.code, r.body)
			}
		}
		r := boot.call("POST", "/api/v1/ai/providers", body).must(t, 200)
		var p struct {
			ID      int64 `json:"id"`
			HasKey  bool  `json:"has_key"`
			IsLocal bool  `json:"is_local"`
		}
		r.decode(t, &p)
		if !p.HasKey || !p.IsLocal || strings.Contains(r.body, secret) || strings.Contains(r.body, "api_key") {
			t.Errorf("created provider: %s", r.body)
		}
		if r := boot.call("POST", fmt.Sprintf("/api/v1/ai/providers/%d/test", p.ID), nil).must(t, 200); !strings.HasPrefix(r.body, `{"ok":true,"latency_ms":`) ||
			!strings.HasSuffix(r.body, `"models":["fake-small","fake-large"]}`) {
			t.Errorf("provider test: %s", r.body)
		}
		if r := boot.call("GET", "/api/v1/ai/status", nil).must(t, 200); !strings.Contains(r.body, `"default_provider":`+fmt.Sprint(p.ID)) ||
			!strings.Contains(r.body, `"has_ready_provider":true`) || strings.Contains(r.body, secret) {
			t.Errorf("status: %s", r.body)
		}

		if r := viewer.call("POST", "/api/v1/ai/conversations", map[string]any{"scope_kind": "fleet"}); r.code != 403 {
			t.Errorf("viewer opening a conversation: %d", r.code)
		}
		r = analyst.call("POST", "/api/v1/ai/conversations", map[string]any{"scope_kind": "fleet", "provider_id": p.ID}).must(t, 200)
		var created struct {
			OK bool  `json:"ok"`
			ID int64 `json:"id"`
		}
		r.decode(t, &created)
		path := fmt.Sprintf("/api/v1/ai/conversations/%d/messages", created.ID)
		if r := analyst.call("POST", path, map[string]any{"preset": "no-such"}); r.code != 400 || !strings.Contains(r.body, "preset") {
			t.Errorf("unknown preset: %d %s", r.code, r.body)
		}
		r = analyst.call("POST", path, map[string]any{"content": "what is broken?"}).must(t, 200)
		if ct := r.header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type %q", ct)
		}
		want := `data: {"delta":"Hello "}` + "\n\n" + `data: {"delta":"world"}` + "\n\n" + `data: {"done":true,"tokens_in":12,"tokens_out":2}`
		if r.body != want {
			t.Errorf("SSE body:\n%s\nwant:\n%s", r.body, want)
		}
		d := analyst.call("GET", fmt.Sprintf("/api/v1/ai/conversations/%d", created.ID), nil).must(t, 200)
		for _, frag := range []string{`"role":"context"`, `"role":"user","content":"what is broken?"`, `"role":"assistant","content":"Hello world","tokens_in":12,"tokens_out":2`} {
			if !strings.Contains(d.body, frag) {
				t.Errorf("conversation lacks %s: %.600s", frag, d.body)
			}
		}
		// What the reports print as the latest analyses (their range is
		// whole days before today's, so the wiring is read directly).
		got, err := h.latestAnalyses(t.Context(), "", time.Now().Add(-time.Hour), time.Now().Add(time.Hour), 3)
		if err != nil || len(got) != 1 || got[0].Summary != "Hello world" || got[0].Title != "fleet (user, fake-small)" {
			t.Errorf("latest analyses for the reports: %+v, %v", got, err)
		}
		a := boot.call("GET", "/api/v1/audit?action=ai.*&limit=50", nil).must(t, 200)
		for _, action := range []string{`"action":"ai.analyze"`, `"action":"ai.provider.create"`} {
			if !strings.Contains(a.body, action) {
				t.Errorf("audit lacks %s: %.400s", action, a.body)
			}
		}
		if strings.Contains(a.body, secret) {
			t.Error("the key is in the audit log")
		}
		if strings.Contains(h.logs.String(), secret) {
			t.Error("the key is in the hub's log")
		}
		// The key reached the provider, in its header only.
		reqs := fake.Requests()
		if got := reqs[len(reqs)-1].Header.Get("Authorization"); got != "Bearer "+secret {
			t.Errorf("provider's Authorization %q", got)
		}
	})
}

// TestAIClientGoesAway: a client that disconnects mid-answer cancels the
// provider's call at once and leaves the part received stored, marked
// partial (the connection's end reaches the handler through net/http's
// watch of the connection, which starts once the body is read whole).
func TestAIClientGoesAway(t *testing.T) {
	h, boot := bootstrap(t, filepath.Join(t.TempDir(), "netmon.db"), func(c *config.HubConfig) { c.AI.Enabled = true })
	fake := providertest.New(t, "compat")
	fake.Push(providertest.Script{Hold: true, Chunks: providertest.Stream("compat", providertest.Answer{NoEnd: true,
		Parts: []providertest.Part{{Text: "first half"}}})})
	boot.call("POST", "/api/v1/ai/providers", map[string]any{"name": "slow", "kind": "compat", "base_url": fake.URL, "default_model": "fake-small"}).must(t, 200)
	boot.call("POST", "/api/v1/ai/conversations", map[string]any{"scope_kind": "fleet"}).must(t, 200)

	req, _ := http.NewRequest("POST", h.base+"/api/v1/ai/conversations/1/messages", strings.NewReader(`{"content":"go on"}`))
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(&http.Cookie{Name: "nm_session", Value: boot.cookie})
	for k, v := range boot.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != `data: {"delta":"first half"}`+"\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	resp.Body.Close() // the client goes away
	select {
	case <-fake.Gone():
	case <-time.After(5 * time.Second):
		t.Fatal("the provider's call was not cancelled when the client went away")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := boot.call("GET", "/api/v1/ai/conversations/1", nil).must(t, 200)
		if strings.Contains(r.body, `"role":"assistant","content":"first half"`) && strings.Contains(r.body, `"partial":true`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no partial answer stored: %.600s", r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAISiteScope: a site-bound analyst opens a conversation on its own
// site's agent, gets 404 for another site's agent exactly as for a
// missing one, and never lists another site's conversations; the facts
// of its own agent reach the provider as tokens.
func TestAISiteScope(t *testing.T) {
	h, boot := bootstrap(t, filepath.Join(t.TempDir(), "netmon.db"), func(c *config.HubConfig) { c.AI.Enabled = true; c.Auth.MultiSite = true })
	ctx := t.Context()
	ids := map[string]int64{}
	for _, a := range []store.Agent{{Name: "db-01.site-a.example", Site: "a", MachineID: "m-a"}, {Name: "db-09.site-b.example", Site: "b", MachineID: "m-b"}} {
		a.TokenHash, a.EnrolledAt, a.LastSeen = "h-"+a.MachineID, time.Now().Unix(), time.Now().Unix()
		if err := h.db.InTx(ctx, func(tx *store.Tx) error {
			id, _, err := tx.CreateAgent(ctx, a)
			ids[a.Site] = id
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	fake := providertest.New(t, "compat")
	fake.Push(providertest.Script{Chunks: providertest.Stream("compat", providertest.Answer{Parts: []providertest.Part{{Text: "fine"}}})})
	boot.call("POST", "/api/v1/ai/providers", map[string]any{"name": "p", "kind": "compat", "base_url": fake.URL, "default_model": "fake-small"}).must(t, 200)
	boot.createUser("ann", "analyst-pass-1", "analyst", "a")
	ann := h.client(t)
	ann.login("ann", "analyst-pass-1")

	other := ann.call("POST", "/api/v1/ai/conversations", map[string]any{"scope_kind": "agent", "scope_ref": fmt.Sprint(ids["b"])})
	missing := ann.call("POST", "/api/v1/ai/conversations", map[string]any{"scope_kind": "agent", "scope_ref": "999"})
	if other.code != 404 || missing.code != 404 || strings.Replace(other.body, fmt.Sprint(ids["b"]), "N", 1) != strings.Replace(missing.body, "999", "N", 1) {
		t.Errorf("another site's agent: %d %s; a missing one: %d %s", other.code, other.body, missing.code, missing.body)
	}
	boot.call("POST", "/api/v1/ai/conversations", map[string]any{"scope_kind": "agent", "scope_ref": fmt.Sprint(ids["b"])}).must(t, 200)
	r := ann.call("POST", "/api/v1/ai/conversations", map[string]any{"scope_kind": "agent", "scope_ref": fmt.Sprint(ids["a"])}).must(t, 200)
	var created struct{ ID int64 }
	r.decode(t, &created)
	ann.call("POST", fmt.Sprintf("/api/v1/ai/conversations/%d/messages", created.ID), map[string]any{"content": "anything odd?"}).must(t, 200)
	if l := ann.call("GET", "/api/v1/ai/conversations", nil).must(t, 200); strings.Count(l.body, `"id":`) != 1 || !strings.Contains(l.body, `"site":"a"`) {
		t.Errorf("site a's list: %s", l.body)
	}
	if l := boot.call("GET", "/api/v1/ai/conversations", nil).must(t, 200); strings.Count(l.body, `"id":`) != 2 {
		t.Errorf("the global admin's list: %s", l.body)
	}
	if r := ann.call("GET", "/api/v1/ai/conversations/1", nil); r.code != 404 {
		t.Errorf("site a reading site b's conversation: %d", r.code)
	}
	body := string(fake.Requests()[0].Body)
	if strings.Contains(body, "db-01.site-a.example") || !strings.Contains(body, "host-") {
		t.Errorf("the agent's name left the hub as is, or no token was sent: %.300s", body)
	}
}
