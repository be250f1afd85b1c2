package hub

import (
	"context"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/store/record"
)

// TestNetworkHealth: exact deductions for open critical alerts and
// offline agents, the answer cached for 30 s, and a site-bound caller
// scored on its own site's alerts and agents.
func TestNetworkHealth(t *testing.T) {
	h, admin := fleetHub(t, storetestSQLite(t), func(c *config.HubConfig) { c.Auth.MultiSite = true; c.Alerts.Enabled = false })
	ctx := context.Background()
	_, tokA := createEnrollToken(t, admin, map[string]any{"name": "a", "site": "a", "max_uses": 0})
	on := enrolled(t, hello(t, h, tokA, wire.Hello{Name: "on", MachineID: "m-on"}))
	enrolled(t, hello(t, h, tokA, wire.Hello{Name: "off", MachineID: "m-off"})) // never sends telemetry
	telemetry(t, h, on.AgentToken, wire.Telemetry{TS: time.Now().Unix(), Seq: 1, Interfaces: []wire.Interface{{Name: "eth0"}}}).must(t, 200)
	eventually(t, "the agent online", func() bool {
		ag, err := h.db.Agent(ctx, on.AgentID)
		return err == nil && ag.LastSeen > 0
	})
	now := time.Now().Unix()
	for _, e := range []record.AlertEvent{
		{Kind: "port", Key: "1", Severity: 9, State: "firing", Site: "a"},
		{Kind: "ioc", Key: "2", Severity: 8, State: "ack", Site: "a"},
		{Kind: "port", Key: "3", Severity: 9, State: "resolved", Site: "a"}, // not open
		{Kind: "bw", Key: "4", Severity: 5, State: "firing"},                // not critical
	} {
		e.TS = now
		if _, err := h.db.InsertAlertEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	type body struct {
		Score      int `json:"score"`
		Deductions []struct {
			Reason string `json:"reason"`
			Points int    `json:"points"`
			Detail string `json:"detail"`
		} `json:"deductions"`
		ComputedAt int64 `json:"computed_at"`
	}
	var got body
	admin.call("GET", "/api/v1/health", nil).must(t, 200).decode(t, &got)
	if got.Score != 65 || len(got.Deductions) != 2 ||
		got.Deductions[0].Reason != "critical_alerts" || got.Deductions[0].Points != 20 ||
		got.Deductions[0].Detail != "2 open alert events of severity 8 or above (10 points each, at most 40)" ||
		got.Deductions[1].Reason != "offline_agents" || got.Deductions[1].Points != 15 ||
		got.Deductions[1].Detail != "1 of 2 agents offline (no telemetry within three intervals; 30 points times the share offline)" {
		t.Fatalf("health: %+v", got)
	}

	// A new critical event within 30 s: the cached answer stands.
	if _, err := h.db.InsertAlertEvent(ctx, record.AlertEvent{TS: now, Kind: "port", Key: "5", Severity: 10, State: "firing", Site: "a"}); err != nil {
		t.Fatal(err)
	}
	var again body
	admin.call("GET", "/api/v1/health", nil).must(t, 200).decode(t, &again)
	if again.Score != 65 || again.ComputedAt != got.ComputedAt {
		t.Errorf("not cached: %+v", again)
	}

	// Site b has no agents and no alerts.
	admin.createUser("bob", "bob-password-1", "viewer", "b")
	bob := h.client(t)
	bob.login("bob", "bob-password-1")
	var b body
	bob.call("GET", "/api/v1/health", nil).must(t, 200).decode(t, &b)
	if b.Score != 100 || len(b.Deductions) != 0 {
		t.Errorf("site b: %+v", b)
	}
}
