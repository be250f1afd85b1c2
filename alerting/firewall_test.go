package alerting_test

import (
	"context"
	"testing"
	"time"

	"netmon/alerting"
	"netmon/alerting/rules"
	"netmon/store"
	"netmon/store/storetest"
)

type fwSource []rules.FirewallState

func (f fwSource) FirewallStates(context.Context) ([]rules.FirewallState, error) { return f, nil }

// TestFirewallRules: the engine judges the firewall states every
// inventory cycle with the fwvendor settings; a lasting condition is one
// event counting repeats. Both databases.
func TestFirewallRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock()
		s := alerting.DefaultSettings()
		s.Enabled = true
		s.FWVendor = alerting.FWVendorRule{VPNDown: true, SDWANLossPct: 5, MaxSessions: 1000}
		n := int64(1834)
		src := fwSource{{DeviceID: 9, Name: "fw", Site: "", Sessions: &n,
			Tunnels: []rules.TunnelState{{VDOM: "root", Name: "to-branch"}},
			Health:  []rules.HealthState{{VDOM: "root", Name: "dns", Member: "port1", Up: true, LossPct: 4.9}}}}
		e := newEngine(t, db, c, s, alerting.Deps{Firewalls: src})
		e.EvalInventory(context.Background())
		c.advance(5 * time.Second)
		e.EvalInventory(context.Background())
		evs := events(t, db)
		if len(evs) != 2 {
			t.Fatalf("events %+v", evs)
		}
		got := map[string]int64{}
		for _, ev := range evs {
			got[ev.Kind+"|"+ev.Key] = ev.Count
			if ev.State != "firing" {
				t.Errorf("%s state %s", ev.Kind, ev.State)
			}
		}
		if got["vpn_down|9|root/to-branch"] != 2 || got["high_sessions|9"] != 2 {
			t.Errorf("events %v", got)
		}
	})
}
