package alerting_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"netmon/alerting"
	"netmon/store/storetest"
)

// TestNewLeaderReloadsOpenEvents (issue 33): an event the former leader
// opened is continued, not raised again, by a replica that becomes
// leader; while it did not lead, its loop evaluated nothing.
func TestNewLeaderReloadsOpenEvents(t *testing.T) {
	db := storetest.OpenSQLite(t)
	c := newClock()
	s := alerting.DefaultSettings()
	a := newEngine(t, db, c, s, alerting.Deps{})
	a.Raise(context.Background(), bwAlert("hub|in"))

	var leads atomic.Bool
	cfg := alerting.DefaultConfig()
	cfg.Enabled, cfg.SnapshotEvery, cfg.InventoryEvery = true, 10*time.Millisecond, 10*time.Millisecond
	b := alerting.New(quiet(), cfg, alerting.Deps{Store: db, Now: c.now, IsLeader: leads.Load,
		Settings: func(context.Context) (alerting.Settings, error) { return s, nil }}, nil)
	// b started before a's event existed: its open events are empty.
	a.Raise(context.Background(), bwAlert("hub|in")) // count 2, by the leader
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Stop() }()
	c.advance(time.Second)
	a.Raise(context.Background(), bwAlert("hub|in")) // count 3, after b loaded
	leads.Store(true)
	time.Sleep(100 * time.Millisecond) // b's loop sees the leadership and reloads
	b.Raise(context.Background(), bwAlert("hub|in"))
	evs := events(t, db)
	if len(evs) != 1 || evs[0].Count != 4 || evs[0].State != "firing" {
		t.Errorf("events after the new leader raised the same alert: %+v; want one firing event of count 4", evs)
	}
}
