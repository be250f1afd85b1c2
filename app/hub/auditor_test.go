package hub

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/compliance"
	"netmon/app/config"
	"netmon/store/storetest"
)

// TestAuditorReadsAndChangesNothing: a user of the read-only auditor role
// (issue 21) reads the compliance status, downloads evidence that
// verifies, reads the audit log, the review list and the ISMS registers;
// every changing route answers it exactly 403 (reviews, ISMS, users,
// tokens, alert configuration, silences, agents, capture — including
// PATCH /api/v1/agents/{id}, which the spec opens to any signed-in
// identity), each refusal is audited as denied, and nothing changed.
// Other roles keep the spec's rights (a viewer still renames an agent).
// On both databases.
func TestAuditorReadsAndChangesNothing(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		clk := newComplianceClock()
		h, boot := bootstrapWith(t, dsn, clk.option(), func(c *config.HubConfig) {
			c.Compliance.Enabled = true
			c.Compliance.KeyFile = filepath.Join(t.TempDir(), "compliance.key")
			clk.use(c)
		})
		boot.createUser("aud", "auditor-pass-1", "auditor", "")
		viewerID := boot.createUser("vic", "viewer-pass-1", "viewer", "")
		boot.createUser("admin1", "admin-pass-1", "admin", "") // ends the bootstrap session
		admin := h.client(t)
		admin.login("admin1", "admin-pass-1")

		// Something of every kind for the auditor to read and try to change.
		admin.call("POST", "/api/v1/compliance/reviews", map[string]string{"kind": "access", "period": "2026-10", "notes": "quarterly", "finding": "none"}).must(t, 200)
		var asset struct {
			ID int64 `json:"id"`
		}
		assetBody := map[string]any{"ref": "AS-1", "asset": map[string]any{"name": "core firewall", "type": "hardware", "owner": "netops", "classification": "confidential"}}
		admin.call("POST", "/api/v1/isms/assets", assetBody).must(t, 200).decode(t, &asset)
		var enroll struct {
			Token string `json:"token"`
		}
		admin.call("POST", "/api/v1/enroll-tokens", map[string]any{"name": "aud", "max_uses": 1}).must(t, 200).decode(t, &enroll)
		enroller := h.client(t)
		enroller.headers[wire.HeaderEnrollToken] = enroll.Token
		var hello wire.HelloResponse
		enroller.call("POST", wire.PathHello, wire.Hello{Name: "edge-1", ProtocolVersion: 1}).must(t, 200).decode(t, &hello)
		var alertCfg map[string]any
		admin.call("GET", "/api/alerts", nil).must(t, 200).decode(t, &alertCfg)

		aud := h.client(t)
		aud.login("aud", "auditor-pass-1")

		// Reads.
		var st compliance.Status
		aud.call("GET", "/api/v1/compliance/status", nil).must(t, 200).decode(t, &st)
		if !st.Config.Enabled || st.Config.PublicKey == "" {
			t.Fatalf("status %+v", st)
		}
		pub, err := compliance.ParsePublicPEM([]byte(st.Config.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		// Once the hour is signed, the auditor's download verifies whole.
		day := clk.Now().UTC().Format(time.DateOnly)
		clk.closeHour()
		waitSigned(t, aud, day, pub, 0)
		var reviews []struct{ Kind, Period, Author string }
		aud.call("GET", "/api/v1/compliance/reviews", nil).must(t, 200).decode(t, &reviews)
		if len(reviews) != 1 || reviews[0].Kind != "access" || reviews[0].Author != "admin1" {
			t.Fatalf("reviews %+v", reviews)
		}
		var rows []auditRow
		aud.call("GET", "/api/v1/audit?action=compliance.*", nil).must(t, 200).decode(t, &rows)
		if len(rows) != 2 || rows[0].Action != "compliance.evidence" || rows[0].Username != "aud" || rows[1].Action != "compliance.review" {
			t.Fatalf("audit rows %+v", rows)
		}
		var assets []struct{ Ref string }
		aud.call("GET", "/api/v1/isms/assets", nil).must(t, 200).decode(t, &assets)
		if len(assets) != 1 || assets[0].Ref != "AS-1" {
			t.Fatalf("assets %+v", assets)
		}

		// Writes with bodies that would succeed for an admin: all 403.
		writes := []struct {
			method, path string
			body         any
		}{
			{"POST", "/api/v1/compliance/reviews", map[string]string{"kind": "log", "period": "2026-11", "notes": "n", "finding": "none"}},
			{"POST", "/api/v1/isms/assets", map[string]any{"ref": "AS-2", "asset": assetBody["asset"]}},
			{"PUT", fmt.Sprintf("/api/v1/isms/assets/%d", asset.ID), assetBody},
			{"POST", "/api/v1/users", map[string]string{"username": "mallory", "password": "long-enough-1", "role": "admin"}},
			{"PUT", fmt.Sprintf("/api/v1/users/%d", viewerID), map[string]any{"role": "admin"}},
			{"DELETE", fmt.Sprintf("/api/v1/users/%d", viewerID), nil},
			{"POST", "/api/v1/tokens", map[string]string{"name": "t", "role": "auditor"}},
			{"POST", "/api/v1/enroll-tokens", map[string]any{"name": "e", "max_uses": 1}},
			{"PUT", "/api/alerts", alertCfg},
			{"POST", "/api/v1/alerts/routes", map[string]any{"name": "r", "channels": []string{"webhook"}}},
			{"POST", "/api/v1/alerts/silences", map[string]any{"kind": "*", "end": time.Now().Add(time.Hour).Unix()}},
			{"PATCH", fmt.Sprintf("/api/v1/agents/%d", hello.AgentID), map[string]string{"name": "renamed-by-auditor"}},
			{"DELETE", fmt.Sprintf("/api/v1/agents/%d", hello.AgentID), nil},
			{"POST", "/api/capture/start", map[string]any{}},
		}
		for _, w := range writes {
			r := aud.call(w.method, w.path, w.body)
			if r.code != 403 || !strings.HasPrefix(r.body, `{"error":"permission denied: `) {
				t.Errorf("auditor %s %s: %d %s, want 403", w.method, w.path, r.code, r.body)
			}
		}
		// And every other changing route of the table (ids that do not
		// exist: the refusal comes before any lookup).
		swept := 0
		for _, r := range h.api.Routes() {
			if r.Method == "GET" || !r.Perm.UserPerm() || r.Path == "/api/logout" {
				continue
			}
			path := strings.NewReplacer("{id}", "999999", "{kind}", "risks", "{channel}", "webhook").Replace(r.Path)
			if resp := aud.call(r.Method, path, "{}"); resp.code != 403 {
				t.Errorf("auditor %s %s (%s): %d %s, want 403", r.Method, path, r.Perm, resp.code, resp.body)
			}
			swept++
		}
		if swept < 25 {
			t.Fatalf("only %d changing routes swept", swept)
		}

		// Every refusal is audited as denied, and nothing changed.
		var denied []auditRow
		admin.call("GET", "/api/v1/audit?action=access.denied&limit=500", nil).must(t, 200).decode(t, &denied)
		byAud := 0
		for _, d := range denied {
			if d.Username == "aud" && d.Result == "denied" {
				byAud++
			}
		}
		if byAud != len(writes)+swept {
			t.Fatalf("%d denials of the auditor audited, want %d", byAud, len(writes)+swept)
		}
		admin.call("GET", "/api/v1/compliance/reviews", nil).must(t, 200).decode(t, &reviews)
		admin.call("GET", "/api/v1/isms/assets", nil).must(t, 200).decode(t, &assets)
		var users []struct{ Username, Role string }
		admin.call("GET", "/api/v1/users", nil).must(t, 200).decode(t, &users)
		roles := map[string]string{}
		for _, u := range users {
			roles[u.Username] = u.Role
		}
		var agent struct {
			Agent struct{ Name string } `json:"agent"`
		}
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", hello.AgentID), nil).must(t, 200).decode(t, &agent)
		if len(reviews) != 1 || len(assets) != 1 || len(users) != 3 || roles["vic"] != "viewer" || roles["mallory"] != "" || agent.Agent.Name != "edge-1" {
			t.Fatalf("state changed: reviews %+v assets %+v users %+v agent %+v", reviews, assets, users, agent)
		}

		// The spec's rights of the other roles are untouched: a viewer
		// (any signed-in identity) renames the agent; logout still works
		// for the auditor.
		vic := h.client(t)
		vic.login("vic", "viewer-pass-1")
		vic.call("PATCH", fmt.Sprintf("/api/v1/agents/%d", hello.AgentID), map[string]string{"name": "edge-renamed"}).must(t, 200)
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", hello.AgentID), nil).must(t, 200).decode(t, &agent)
		if agent.Agent.Name != "edge-renamed" {
			t.Fatalf("viewer rename: %+v", agent)
		}
		aud.call("POST", "/api/logout", nil).must(t, 200)
		aud.call("GET", "/api/v1/compliance/status", nil).must(t, 401)
	})
}
