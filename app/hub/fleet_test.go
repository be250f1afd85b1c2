package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/store/storetest"
)

const testStaticToken = "static-enroll-secret-0123456789"

// fleetHub starts a hub with a known static enroll token, the legacy admin
// password and a 30 s telemetry interval.
func fleetHub(t *testing.T, dsn string, mutate func(*config.HubConfig)) (*testHub, *client) {
	t.Helper()
	h := startTestHub(t, dsn, func(c *config.HubConfig) {
		c.Auth.Password = "admin-password-1"
		c.Fleet.StaticToken = testStaticToken
		if mutate != nil {
			mutate(c)
		}
	})
	admin := h.client(t)
	admin.login("", "admin-password-1")
	return h, admin
}

// hello enrolls through the API with secret in X-Enroll-Token.
func hello(t *testing.T, h *testHub, secret string, body any) response {
	t.Helper()
	c := h.client(t)
	c.headers[wire.HeaderEnrollToken] = secret
	return c.call("POST", wire.PathHello, body)
}

func enrolled(t *testing.T, r response) wire.HelloResponse {
	t.Helper()
	r.must(t, 200)
	var out wire.HelloResponse
	r.decode(t, &out)
	if !out.Accepted || out.AgentID == 0 || !strings.HasPrefix(out.AgentToken, "agt_") {
		t.Fatalf("hello answer %+v", out)
	}
	return out
}

func telemetry(t *testing.T, h *testHub, agentToken string, body any) response {
	t.Helper()
	c := h.client(t)
	c.bearer = agentToken
	return c.call("POST", wire.PathTelemetry, body)
}

func createEnrollToken(t *testing.T, admin *client, body map[string]any) (int64, string) {
	t.Helper()
	var out struct {
		OK    bool   `json:"ok"`
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	admin.call("POST", "/api/v1/enroll-tokens", body).must(t, 200).decode(t, &out)
	if !out.OK || out.ID == 0 || !strings.HasPrefix(out.Token, "ent_") {
		t.Fatalf("create enroll token: %+v", out)
	}
	return out.ID, out.Token
}

// eventually polls cond for up to 5 s (the ingest queue flushes every second).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestEnrollmentRefusals walks the hello through every refusal of spec 7
// and RELIABILITY case 19, in an order that also checks the throttle:
// failures count per address, a success resets the count, the sixth
// failure within a minute gets 429.
func TestEnrollmentRefusals(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, nil)
		ctx := context.Background()
		one := 1
		_, single := createEnrollToken(t, admin, map[string]any{"name": "single"})
		expiredID, expired := createEnrollToken(t, admin, map[string]any{"name": "expired", "expires_in_days": one})
		if _, err := h.db.Writer().ExecContext(ctx, `UPDATE enroll_tokens SET expires_at = $1 WHERE id = $2`, time.Now().Unix()-1, expiredID); err != nil {
			t.Fatal(err)
		}
		revokedID, revoked := createEnrollToken(t, admin, map[string]any{"name": "revoked", "max_uses": 0})
		admin.call("DELETE", fmt.Sprintf("/api/v1/enroll-tokens/%d", revokedID), nil).must(t, 200)
		_, elsewhere := createEnrollToken(t, admin, map[string]any{"name": "lan only", "allowed_cidrs": []string{"10.0.0.0/8", "192.0.2.7"}})
		_, local := createEnrollToken(t, admin, map[string]any{"name": "loopback", "allowed_cidrs": []string{"127.0.0.0/8"}, "max_uses": 0})

		body := wire.Hello{Name: "web-1", Version: "1.0.0", ProtocolVersion: 1, OS: "linux", Arch: "amd64"}
		steps := []struct {
			desc   string
			secret string
			body   any
			want   int
		}{
			{"no token", "", body, 401},
			{"whitespace token", "   \t", body, 401},
			{"unknown ent_ token", "ent_" + strings.Repeat("0", 64), body, 401},
			{"single-use token", single, body, 200}, // resets the count
			{"single-use token replayed", single, body, 409},
			{"revoked token", revoked, body, 401},
			{"expired token", expired, body, 401},
			{"address outside allowed_cidrs", elsewhere, body, 403},
			{"token limited to loopback", local, body, 200}, // resets
			{"static token", testStaticToken, body, 200},
			{"8 KiB body", testStaticToken, `{"name":"` + strings.Repeat("x", 8<<10) + `"}`, 413},
			{"wrong static token 1", testStaticToken + "x", body, 401},
			{"wrong 2", "nope", body, 401},
			{"wrong 3", "nope", body, 401},
			{"wrong 4", "nope", body, 401},
			{"wrong 5", "nope", body, 401},
			{"sixth failure within a minute", "nope", body, 429},
			{"a valid token while blocked", testStaticToken, body, 429},
		}
		for _, s := range steps {
			r := hello(t, h, s.secret, s.body)
			if r.code != s.want {
				t.Fatalf("%s: status %d, want %d; body %s", s.desc, r.code, s.want, r.body)
			}
			if s.want == 429 && r.header.Get("Retry-After") != "60" {
				t.Errorf("%s: Retry-After %q, want 60", s.desc, r.header.Get("Retry-After"))
			}
			if s.want != 200 && !strings.Contains(r.body, `"error"`) {
				t.Errorf("%s: body %s has no error", s.desc, r.body)
			}
		}

		var items []struct {
			Name  string `json:"name"`
			Uses  int    `json:"uses"`
			State string `json:"state"`
		}
		admin.call("GET", "/api/v1/enroll-tokens", nil).must(t, 200).decode(t, &items)
		got := map[string]string{}
		for _, it := range items {
			got[it.Name] = fmt.Sprintf("%s/%d", it.State, it.Uses)
		}
		want := map[string]string{"single": "exhausted/1", "expired": "expired/0", "revoked": "revoked/0", "lan only": "active/0", "loopback": "active/1"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("token %q: %s, want %s", k, got[k], v)
			}
		}
		if strings.Contains(admin.call("GET", "/api/v1/enroll-tokens", nil).body, "ent_") {
			t.Error("the token list shows a secret")
		}
		var agents []struct{ ID int64 }
		admin.call("GET", "/api/v1/agents", nil).must(t, 200).decode(t, &agents)
		if len(agents) != 3 {
			t.Errorf("%d agents enrolled, want 3", len(agents))
		}
		var audit []struct {
			Action string `json:"action"`
		}
		admin.call("GET", "/api/v1/audit?limit=200", nil).must(t, 200).decode(t, &audit)
		used := 0
		for _, a := range audit {
			if a.Action == "enroll_token.used" {
				used++
			}
		}
		if used != 3 {
			t.Errorf("%d enroll_token.used audit records, want 3", used)
		}
		for _, secret := range []string{single, expired, revoked, elsewhere, local, testStaticToken} {
			if strings.Contains(h.logs.String(), secret) {
				t.Errorf("a secret enroll token appears in the log")
			}
		}
	})
}

// TestEnrollmentMultiSite: only site-bound tokens enroll, token creation
// needs a site, agents inherit the token's site and other sites see
// neither the agent nor its detail.
func TestEnrollmentMultiSite(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		admin.call("POST", "/api/v1/enroll-tokens", map[string]any{"name": "no site"}).must(t, 400)
		_, siteA := createEnrollToken(t, admin, map[string]any{"name": "a", "site": "a", "max_uses": 0})
		hello(t, h, testStaticToken, wire.Hello{Name: "x"}).must(t, 401)
		hello(t, h, siteA, wire.Hello{Name: "x", Site: "b"}).must(t, 403)
		a := enrolled(t, hello(t, h, siteA, wire.Hello{Name: "x"}))
		var d struct {
			Agent struct {
				Site string `json:"site"`
			} `json:"agent"`
		}
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", a.AgentID), nil).must(t, 200).decode(t, &d)
		if d.Agent.Site != "a" {
			t.Errorf("agent site %q, want the token's a", d.Agent.Site)
		}
		admin.createUser("bob", "bob-password-1", "admin", "b")
		bob := h.client(t)
		bob.login("bob", "bob-password-1")
		bob.call("GET", fmt.Sprintf("/api/v1/agents/%d", a.AgentID), nil).must(t, 404)
		bob.call("GET", fmt.Sprintf("/api/v1/agents/%d/history", a.AgentID), nil).must(t, 404)
		bob.call("PATCH", fmt.Sprintf("/api/v1/agents/%d", a.AgentID), map[string]string{"name": "mine"}).must(t, 404)
		bob.call("DELETE", fmt.Sprintf("/api/v1/agents/%d", a.AgentID), nil).must(t, 404)
		if r := bob.call("GET", "/api/v1/agents", nil).must(t, 200); r.body != "[]" {
			t.Errorf("site b lists %s", r.body)
		}
		// A site-b admin's token is forced to site b.
		var created struct {
			Item struct {
				Site string `json:"site"`
			} `json:"item"`
		}
		bob.call("POST", "/api/v1/enroll-tokens", map[string]any{"name": "b", "site": "a"}).must(t, 200).decode(t, &created)
		if created.Item.Site != "b" {
			t.Errorf("site-b admin created a token for site %q", created.Item.Site)
		}
	})
}

type historyPoint struct {
	TS    int64   `json:"ts"`
	In    float64 `json:"in"`
	Out   float64 `json:"out"`
	Local float64 `json:"local"`
	PPS   float64 `json:"pps"`
}

func agentHistory(t *testing.T, admin *client, id int64) []historyPoint {
	t.Helper()
	var out []historyPoint
	admin.call("GET", fmt.Sprintf("/api/v1/agents/%d/history?minutes=120", id), nil).must(t, 200).decode(t, &out)
	return out
}

// TestTelemetryRates: rates between consecutive batches, a counter reset
// giving no rate, a 32-bit wrap unwrapped, repeated seqs stored once, a
// wild ts replaced, connections replaced by each batch.
func TestTelemetryRates(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, nil)
		a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "db-1", MachineID: "m-1"}))
		now := time.Now().Unix()
		batch := func(seq uint64, ts int64, eth, lo uint64, conns ...wire.Connection) wire.Telemetry {
			return wire.Telemetry{TS: ts, Seq: seq, Interfaces: []wire.Interface{
				{Name: "eth0", RxBytes: eth, TxBytes: eth, RxPackets: eth / 100, TxPackets: eth / 50},
				{Name: "lo", RxBytes: lo, TxBytes: lo, RxPackets: lo / 10, TxPackets: lo / 10},
			}, Connections: conns}
		}
		hostile := wire.Connection{Proto: "tcp", LocalAddr: "10.0.0.1:443", RemoteAddr: "198.51.100.9:51000", Status: "ESTABLISHED", PID: 42,
			Process: "<img src=x onerror=alert(1)>\u202Eexe.txt"}
		steps := []struct {
			desc      string
			body      wire.Telemetry
			wantPts   int
			wantIn    float64
			wantLocal float64
		}{
			{"first batch: no rate yet", batch(1, now-120, 100_000, 5_000, hostile, hostile), 0, 0, 0},
			{"30 s later", batch(2, now-90, 130_000, 8_000, hostile), 1, 1000, 100},
			{"the same seq again", batch(2, now-90, 999_999_999, 8_000), 1, 1000, 100},
			{"counters reset (reboot)", batch(3, now-60, 50, 20), 1, 1000, 100},
			{"near the 32-bit limit", batch(4, now-30, 4_294_967_000, 320), 2, (4_294_967_000 - 50) / 30.0, 10},
			{"32-bit counter wrapped", batch(5, now, 200, 620), 3, 496 / 30.0, 10},
		}
		for _, s := range steps {
			var resp wire.TelemetryResponse
			telemetry(t, h, a.AgentToken, s.body).must(t, 200).decode(t, &resp)
			if !resp.OK || resp.Interval != 30 {
				t.Fatalf("%s: answer %+v", s.desc, resp)
			}
			eventually(t, s.desc, func() bool {
				seqs, _ := storetest.AgentSeqs(context.Background(), h.db, a.AgentID)
				return len(seqs) > 0 && seqs[len(seqs)-1] == s.body.Seq
			})
			pts := agentHistory(t, admin, a.AgentID)
			if len(pts) != s.wantPts {
				t.Fatalf("%s: %d history points, want %d: %+v", s.desc, len(pts), s.wantPts, pts)
			}
			if s.wantPts == 0 {
				continue
			}
			last := pts[len(pts)-1]
			if diff := last.In - s.wantIn; diff > 0.01 || diff < -0.01 {
				t.Errorf("%s: in %.3f B/s, want %.3f", s.desc, last.In, s.wantIn)
			}
			if diff := last.Local - s.wantLocal; diff > 0.01 || diff < -0.01 {
				t.Errorf("%s: local %.3f B/s, want %.3f", s.desc, last.Local, s.wantLocal)
			}
			if last.In < 0 || last.Out < 0 || last.PPS < 0 {
				t.Errorf("%s: negative rate %+v", s.desc, last)
			}
		}
		// A ts from 1970 is replaced by the receive time.
		telemetry(t, h, a.AgentToken, batch(6, 1, 500, 700)).must(t, 200)
		var d struct {
			Agent struct {
				LastSeen int64 `json:"last_seen"`
				Online   bool  `json:"online"`
				Conns    int   `json:"conns"`
				Rates    []struct {
					Name  string  `json:"name"`
					RxBps float64 `json:"rx_bps"`
				} `json:"rates"`
				AttrMethod string `json:"attr_method"`
			} `json:"agent"`
			Connections []wire.Connection `json:"connections"`
		}
		// Wait for batch 6 itself: batch 5's ts was already now, so the
		// agent's last_seen alone does not tell that 6 is stored (on
		// PostgreSQL the queue's writers run in parallel).
		stored := func(seq uint64) func() bool {
			return func() bool {
				seqs, _ := storetest.AgentSeqs(context.Background(), h.db, a.AgentID)
				return len(seqs) > 0 && seqs[len(seqs)-1] == seq
			}
		}
		eventually(t, "batch 6", stored(6))
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", a.AgentID), nil).must(t, 200).decode(t, &d)
		if d.Agent.LastSeen < now-1 {
			t.Errorf("last_seen %d after a batch from 1970, want the receive time (about %d)", d.Agent.LastSeen, now)
		}
		if !d.Agent.Online || d.Agent.Conns != 0 || len(d.Connections) != 0 || d.Agent.AttrMethod != "off" || len(d.Agent.Rates) != 2 {
			t.Errorf("detail after batch 6: %+v", d)
		}
		// Connections are replaced by each batch, and hostile text
		// round-trips byte for byte (the console escapes it).
		telemetry(t, h, a.AgentToken, batch(7, now+1, 600, 800, hostile)).must(t, 200)
		eventually(t, "batch 7", stored(7))
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", a.AgentID), nil).must(t, 200).decode(t, &d)
		if len(d.Connections) != 1 {
			t.Fatalf("connections after batch 7: %+v", d.Connections)
		}
		if d.Connections[0] != hostile {
			t.Errorf("connection %+v, want %+v", d.Connections[0], hostile)
		}
		seqs, err := storetest.AgentSeqs(context.Background(), h.db, a.AgentID)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(seqs) != "[1 2 3 4 5 6 7]" {
			t.Errorf("stored seqs %v, want each once", seqs)
		}
	})
}

// TestAgentLifecycle: rename, delete (token stops at once, audited),
// re-enrollment of the same machine, unknown tokens, archive.
func TestAgentLifecycle(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, nil)
		first := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "pc-1", MachineID: "machine-A"}))
		telemetry(t, h, first.AgentToken, wire.Telemetry{Seq: 1}).must(t, 200)
		telemetry(t, h, "agt_"+strings.Repeat("1", 64), wire.Telemetry{Seq: 1}).must(t, 401)
		telemetry(t, h, "", wire.Telemetry{Seq: 1}).must(t, 401)
		telemetry(t, h, "bnt_"+strings.Repeat("1", 64), wire.Telemetry{Seq: 1}).must(t, 401)

		path := fmt.Sprintf("/api/v1/agents/%d", first.AgentID)
		admin.call("PATCH", path, map[string]string{"name": "  "}).must(t, 400)
		var item struct {
			Name string `json:"name"`
		}
		admin.call("PATCH", path, map[string]string{"name": "accounting PC"}).must(t, 200).decode(t, &item)
		if item.Name != "accounting PC" {
			t.Errorf("renamed to %q", item.Name)
		}

		// The same machine enrolls again: a clean new record replaces the
		// old one, whose token stops working.
		second := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "pc-1", MachineID: "machine-A"}))
		if second.AgentID == first.AgentID {
			t.Fatal("re-enrollment kept the agent id")
		}
		telemetry(t, h, first.AgentToken, wire.Telemetry{Seq: 2}).must(t, 401)
		admin.call("GET", path, nil).must(t, 404)
		telemetry(t, h, second.AgentToken, wire.Telemetry{Seq: 1}).must(t, 200)
		// An agent whose offline queue overflowed reports how many batches
		// it dropped (RELIABILITY case 13); the hub adds them up.
		telemetry(t, h, second.AgentToken, wire.Telemetry{Seq: 2, Dropped: 5}).must(t, 200)
		telemetry(t, h, second.AgentToken, wire.Telemetry{Seq: 3, Dropped: 2}).must(t, 200)
		var dropped struct {
			Agent struct {
				Dropped uint64 `json:"dropped"`
			} `json:"agent"`
		}
		eventually(t, "dropped counts", func() bool {
			admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", second.AgentID), nil).must(t, 200).decode(t, &dropped)
			return dropped.Agent.Dropped == 7
		})
		if m := admin.call("GET", "/metrics", nil).must(t, 200).body; !strings.Contains(m, "netmon_agent_spool_dropped_total 7") {
			t.Error("metrics do not count the 7 dropped batches")
		}

		// Delete: the token stops at once.
		path = fmt.Sprintf("/api/v1/agents/%d", second.AgentID)
		viewer := h.client(t)
		admin.createUser("ned", "ned-password-1", "netops", "")
		viewer.login("ned", "ned-password-1")
		viewer.call("DELETE", path, nil).must(t, 403)
		admin.call("DELETE", path, nil).must(t, 200)
		telemetry(t, h, second.AgentToken, wire.Telemetry{Seq: 2}).must(t, 401)
		admin.call("GET", path, nil).must(t, 404)
		admin.call("DELETE", path, nil).must(t, 404)

		var audit []struct {
			Action string `json:"action"`
			Target string `json:"target"`
		}
		admin.call("GET", "/api/v1/audit?limit=200", nil).must(t, 200).decode(t, &audit)
		seen := map[string]bool{}
		for _, a := range audit {
			seen[a.Action] = true
		}
		for _, want := range []string{"enroll_token.used", "agent.update", "agent.delete", "access.denied"} {
			if !seen[want] {
				t.Errorf("no %s audit record", want)
			}
		}

		// Archive: an agent offline longer than -agent-archive-days goes,
		// with its samples; a recent one stays.
		old := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "old", MachineID: "m-old"}))
		fresh := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "fresh", MachineID: "m-fresh"}))
		telemetry(t, h, old.AgentToken, wire.Telemetry{Seq: 1}).must(t, 200)
		telemetry(t, h, fresh.AgentToken, wire.Telemetry{Seq: 1}).must(t, 200)
		eventually(t, "telemetry stored", func() bool {
			s, _ := storetest.AgentSeqs(context.Background(), h.db, old.AgentID)
			return len(s) == 1
		})
		if _, err := h.db.Writer().ExecContext(context.Background(), `UPDATE agents SET last_seen = $1 WHERE id = $2`,
			time.Now().Add(-31*24*time.Hour).Unix(), old.AgentID); err != nil {
			t.Fatal(err)
		}
		n, err := h.fleet.ArchiveOnce(context.Background())
		if err != nil || n != 1 {
			t.Fatalf("archive: %d, %v; want 1 agent", n, err)
		}
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", old.AgentID), nil).must(t, 404)
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", fresh.AgentID), nil).must(t, 200)
		if s, _ := storetest.AgentSeqs(context.Background(), h.db, old.AgentID); len(s) != 0 {
			t.Errorf("archived agent kept %d samples", len(s))
		}
		telemetry(t, h, old.AgentToken, wire.Telemetry{Seq: 2}).must(t, 401)
	})
}

// TestAgentRoutesWithoutTLS: certificate renewal is 404 without -tls, and
// a spoofed client-certificate header is no identity (case 20).
func TestAgentRoutesWithoutTLS(t *testing.T) {
	h, _ := fleetHub(t, storetestSQLite(t), nil)
	a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "x"}))
	c := h.client(t)
	c.bearer = a.AgentToken
	c.call("POST", wire.PathCert, wire.CertRequest{CSRPEM: "x"}).must(t, 404)
	spoof := h.client(t)
	for _, hdr := range []string{"X-Client-Cert", "X-SSL-Client-Cert", "X-Forwarded-Client-Cert", "Ssl-Client-Subject-Dn"} {
		spoof.headers[hdr] = fmt.Sprintf("CN=netmon-agent-%d", a.AgentID)
	}
	spoof.call("POST", wire.PathTelemetry, wire.Telemetry{Seq: 1}).must(t, 401)
	var resp map[string]any
	json.Unmarshal([]byte(c.call("POST", wire.PathTelemetry, wire.Telemetry{Seq: 1}).must(t, 200).body), &resp)
	if resp["ok"] != true {
		t.Errorf("telemetry answer %v", resp)
	}
	_ = http.StatusOK
}
