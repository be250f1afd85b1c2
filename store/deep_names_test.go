package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestNames: the store's part of the ioc rule's names is the agents' DNS
// names, TLS SNI and HTTP Hosts reported since the time asked, each with
// its agent, site, kind and last minute; older reports are left out.
func TestNames(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a := siteAgent(t, db, "a", "north")
		now := time.Now().Unix()
		now -= now % 60
		batches := []record.Deep{
			{AgentID: a, Seq: 1, TS: now - 600, DNS: []record.DNSCount{{Domain: "old.test", Queries: 1}}},
			{AgentID: a, Seq: 2, TS: now, DNS: []record.DNSCount{{Domain: "evil.test", Queries: 1, Responses: 1}},
				L7: []record.L7Hit{{Host: "sni.test", Kind: "tls", Bytes: 1, Hits: 1}, {Host: "host.test", Kind: "http", Bytes: 1, Hits: 1}}},
		}
		if n, err := db.WriteDeep(ctx, batches); err != nil || n != len(batches) {
			t.Fatalf("WriteDeep: %d, %v", n, err)
		}
		got, err := db.Names(ctx, time.Unix(now-60, 0))
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(x, y record.ObservedName) int { return strings.Compare(x.Name, y.Name) })
		want := []record.ObservedName{
			{AgentID: a, Site: "north", Name: "evil.test", Source: "dns", TS: now},
			{AgentID: a, Site: "north", Name: "host.test", Source: "http", TS: now},
			{AgentID: a, Site: "north", Name: "sni.test", Source: "tls", TS: now},
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("(-got, +want):\n%s", diff)
		}
	})
}
