package hub

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestDistributedTickAndOneLeader is issue 33's distributed tick and
// lease through two hubs on one database: both hubs' ticks carry the
// same fleet summary read from the database (agents online/total of
// each site), and exactly one of the two leads.
func TestDistributedTickAndOneLeader(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	key := filepath.Join(t.TempDir(), "vault.key")
	mutate := func(c *config.HubConfig) { c.Auth.SessionStore = "db"; c.Vault.File = key }
	h1, boot := bootstrap(t, dsn, mutate)
	h2 := startTestHub(t, dsn, func(c *config.HubConfig) { c.Auth.Password = "bootstrap-secret-1"; mutate(c) })
	now := time.Now().Unix()
	var first int64
	for _, a := range []store.Agent{{Name: "a1", MachineID: "m1"}, {Name: "a2", MachineID: "m2"}} {
		a.TokenHash, a.EnrolledAt = "h-"+a.MachineID, now-3600
		if err := h1.db.InTx(t.Context(), func(tx *store.Tx) error {
			id, _, err := tx.CreateAgent(t.Context(), a)
			if first == 0 {
				first = id
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// a1 reports now (online, 1000 B/s in); a2 never did.
	if _, err := h1.db.WriteTelemetry(t.Context(), []record.Telemetry{{AgentID: first, Seq: 1, TS: now, In: 1000, Out: 500, PPS: 10, HasRates: true}}); err != nil {
		t.Fatal(err)
	}
	for name, base := range map[string]string{"hub1": h1.base, "hub2": h2.base} {
		f := openFeed(t, base, name, boot.cookie)
		deadline := time.Now().Add(8 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			_, raw, err := f.conn.Read(ctx)
			cancel()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var tick struct {
				Fleet *struct {
					AgentsOnline int     `json:"agents_online"`
					AgentsTotal  int     `json:"agents_total"`
					RxBps        float64 `json:"rx_bps"`
				} `json:"fleet"`
			}
			if err := json.Unmarshal(raw, &tick); err != nil {
				t.Fatal(err)
			}
			if tick.Fleet != nil && tick.Fleet.AgentsTotal == 2 {
				if tick.Fleet.AgentsOnline != 1 || tick.Fleet.RxBps != 1000 {
					t.Errorf("%s: agents online %d, rx %v B/s; want 1 and 1000", name, tick.Fleet.AgentsOnline, tick.Fleet.RxBps)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no tick with the fleet of 2 agents: %.300s", name, raw)
			}
		}
	}
	if h1.leader.IsLeader() == h2.leader.IsLeader() {
		t.Errorf("hub1 leads %v, hub2 leads %v: want exactly one", h1.leader.IsLeader(), h2.leader.IsLeader())
	}
}
