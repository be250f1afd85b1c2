package hub

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestIOCRule: an agent's DNS query and TLS SNI reach the ioc rule through
// the real path (telemetry intake → deep collection tables → the rule's
// name input → store), matched with parent domains against the -ioc-file
// list; events are keyed <agent>|<listed entry> (issue 28 item 7);
// editing the file is picked up on the next check and names already
// reported are judged against the new list; the same report is not raised
// twice; a new report counts a repeat on the open event.
func TestIOCRule(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		list := filepath.Join(t.TempDir(), "ioc.txt")
		t0 := time.Now().Add(-time.Hour)
		writeList := func(s string, mtime time.Time) {
			if err := os.WriteFile(list, []byte(s), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(list, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		writeList("# test list\n0.0.0.0 evil.test\n", t0)
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) {
			c.Alerts.Enabled = false // the test runs the 30-second cycle
			c.Threat.IOCFile = list
		})
		ctx := context.Background()
		admin.call("PUT", "/api/alerts", `{"ioc":{"enabled":true}}`).must(t, 200)
		a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-ioc", MachineID: "m-ioc"}))
		now := time.Now().Unix()
		send := func(seq uint64, ts int64, dns string) {
			b := map[string]any{"ts": ts, "seq": seq, "interfaces": []wire.Interface{{Name: "eth0"}}, "connections": []any{},
				"l7":  []map[string]any{{"host": "login.bank-secure.example", "kind": "tls", "process": "curl", "bytes": 500, "hits": 1}},
				"dns": []map[string]any{{"domain": dns, "process": "curl", "queries": 1, "responses": 1}}}
			telemetry(t, h, a.AgentToken, b).must(t, 200)
			eventually(t, "the deep batch stored", func() bool {
				ns, err := h.db.ObservedNames(ctx, ts-ts%60)
				return err == nil && len(ns) >= 2
			})
		}
		events := func() []record.AlertEvent {
			evs, err := h.db.ListAlertEvents(ctx, store.AlertFilter{Kind: "ioc"})
			if err != nil {
				t.Fatal(err)
			}
			return evs
		}

		send(1, now, "a.b.evil.test")
		h.alerts.EvalIOC(ctx)
		evs := events()
		wantKey := fmt.Sprintf("%d|evil.test", a.AgentID)
		wantMsg := fmt.Sprintf(`agent %d saw DNS name "a.b.evil.test": listed as evil.test in %s line 2`, a.AgentID, list)
		if len(evs) != 1 || evs[0].Key != wantKey || evs[0].Message != wantMsg || evs[0].Severity != 8 || evs[0].AgentID != a.AgentID || evs[0].Count != 1 {
			t.Fatalf("after the first batch: %+v", evs)
		}
		h.alerts.EvalIOC(ctx)
		if evs := events(); len(evs) != 1 || evs[0].Count != 1 {
			t.Fatalf("the same report raised again: %+v", evs)
		}

		// The operator adds the bank phish; the poll notices the new mtime.
		writeList("# test list\n0.0.0.0 evil.test\n||bank-secure.example^\n", t0.Add(time.Minute))
		h.iocList.Check()
		if h.iocList.Loads() != 2 {
			t.Fatalf("the edited list was not reloaded: %d loads", h.iocList.Loads())
		}
		h.alerts.EvalIOC(ctx)
		evs = events()
		if len(evs) != 2 || evs[0].Key != fmt.Sprintf("%d|bank-secure.example", a.AgentID) || evs[1].Count != 2 {
			t.Fatalf("after the reload: %+v", evs)
		}
		if want := fmt.Sprintf(`agent %d saw TLS SNI "login.bank-secure.example": listed as bank-secure.example in %s line 3`, a.AgentID, list); evs[0].Message != want {
			t.Errorf("message %q, want %q", evs[0].Message, want)
		}

		// A report in the next minute repeats the open event.
		send(2, now+60, "a.b.evil.test")
		h.alerts.EvalIOC(ctx)
		evs = events()
		if len(evs) != 2 || evs[1].Key != wantKey || evs[1].Count != 3 {
			t.Fatalf("after a new report: %+v", evs)
		}
	})
}
