package store_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// dayFlow is one flow of 1 000 octets at ts from a distinct source.
func dayFlow(ts int64, i int) record.Flow {
	return record.Flow{TS: ts, Exporter: addr("192.0.2.1"), Src: netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), Dst: addr("203.0.113.1"),
		SrcPort: uint16(1000 + i), DstPort: 443, Proto: 6, Packets: 1, Octets: 1000}
}

// flowCount returns the rows and flows of table (a view or parent).
func flowCount(t *testing.T, db *store.DB, table string) [2]int64 {
	t.Helper()
	var n [2]int64
	if err := db.Reader().QueryRowContext(t.Context(), `SELECT COUNT(*), COALESCE(SUM(flows), 0) FROM `+table).Scan(&n[0], &n[1]); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// TestFlowDaysRetention: retention drops the flow days wholly older than
// its cutoff and nothing else: the last second of the newest expired day
// is gone, the first second of the day holding the cutoff is kept (with
// the whole day), today is kept, rows that went to the default table are
// purged row by row at the exact cutoff, and the days ahead exist.
func TestFlowDaysRetention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		const keepHours = 168
		now := time.Now().Unix()
		cutoff := now - keepHours*3600
		keepDay := cutoff - cutoff%86400 // the day holding the cutoff: kept whole
		// minute -> flows written at its start (each minute in its own day
		// except the two around keepDay's start).
		writes := map[int64]int{
			keepDay - 3*86400 + 600: 3, // long expired
			keepDay - 60:            5, // the newest expired day's last minute
			keepDay:                 7, // the kept day's first minute
			now - now%60 - 120:      11,
		}
		var fs []record.Flow
		for ts, n := range writes {
			for i := range n {
				fs = append(fs, dayFlow(ts+int64(i%50), i))
			}
		}
		if _, err := db.WriteFlows(ctx, fs); err != nil {
			t.Fatal(err)
		}
		if n, err := db.BuildFlowHours(ctx, keepDay+3600, 100); err != nil || n != 3 {
			t.Fatalf("built %d hours, %v; want 3", n, err)
		}
		// Rows written into the parent directly for a day without a table
		// go to the default table: one expired, one kept.
		for _, ts := range []int64{keepDay - 2*86400 + 5, keepDay + 86400 + 5} {
			if _, err := db.Writer().ExecContext(ctx, `INSERT INTO flow_minutes (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
				VALUES ($1, '192.0.2.9', '10.9.0.1', '10.9.0.2', 1, 2, 17, 1, 1, 100, $1, $1)`, ts); err != nil {
				t.Fatal(err)
			}
		}
		before := map[string][2]int64{"flow_minutes": flowCount(t, db, "flow_minutes"), "flow_hours": flowCount(t, db, "flow_hours")}
		if diff := cmp.Diff(before, map[string][2]int64{"flow_minutes": {26 + 2, 26 + 200}, "flow_hours": {15, 15}}); diff != "" {
			t.Fatalf("before the run (-got, +want):\n%s", diff)
		}

		reg := prometheus.NewRegistry()
		r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: keepHours, Interval: time.Hour}, db, reg)
		for _, table := range store.FlowTables {
			if err := r.Register(table, "ts"); err != nil {
				t.Fatal(err)
			}
		}
		deleted, err := r.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Only the default's row older than the cutoff is deleted row by
		// row, and the states of the hours of the dropped days (those of
		// the kept day stay with its rows).
		if diff := cmp.Diff(deleted, map[string]int64{"flow_minutes": 1, "flow_hours": 0, "flow_hour_state": 2}); diff != "" {
			t.Errorf("deleted (-got, +want):\n%s", diff)
		}
		after := map[string][2]int64{"flow_minutes": flowCount(t, db, "flow_minutes"), "flow_hours": flowCount(t, db, "flow_hours")}
		// Kept: keepDay's 7 flows (minute and hour rows), the current 11,
		// the default's row after the cutoff.
		if diff := cmp.Diff(after, map[string][2]int64{"flow_minutes": {7 + 11 + 1, 7 + 11 + 100}, "flow_hours": {7, 7}}); diff != "" {
			t.Errorf("after the run (-got, +want):\n%s", diff)
		}
		today := now - now%86400
		wantDays := []int64{keepDay}
		for d := keepDay + 86400; d <= today+2*86400; d += 86400 {
			wantDays = append(wantDays, d)
		}
		for _, parent := range []string{"flow_minutes", "flow_hours"} {
			days, err := db.FlowDays(ctx, parent)
			if err != nil {
				t.Fatal(err)
			}
			// Days between keepDay and today that nobody wrote have no table.
			days = slices.DeleteFunc(days, func(d int64) bool { return d > keepDay && d < today })
			want := slices.DeleteFunc(slices.Clone(wantDays), func(d int64) bool { return d > keepDay && d < today })
			if diff := cmp.Diff(days, want); diff != "" {
				t.Errorf("%s days (-got, +want):\n%s", parent, diff)
			}
		}
		if diff := cmp.Diff(metricValues(t, reg, "netmon_retention_dropped_days_total"), map[string]float64{"flow_minutes": 2, "flow_hours": 2}); diff != "" {
			t.Errorf("dropped days (-got, +want):\n%s", diff)
		}
		// A second run has nothing left to drop; writes to every kept day
		// still work (the cache forgot the dropped tables).
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.WriteFlows(ctx, []record.Flow{dayFlow(keepDay+5, 1), dayFlow(now-5, 2), dayFlow(keepDay-86400+5, 3)}); err != nil {
			t.Fatalf("write after the drop: %v", err)
		}
		if got := flowCount(t, db, "flow_minutes"); got != [2]int64{22, 121} {
			t.Errorf("flow_minutes after the late writes = %v, want [22 121]", got)
		}
		// The kept day's hour is still built: its late flow is appended.
		if got := flowCount(t, db, "flow_hours"); got != [2]int64{8, 8} {
			t.Errorf("flow_hours after the late writes = %v, want [8 8]", got)
		}
	})
}

// TestFlowDaysTodayNeverDropped: with the shortest retention, the day
// being written keeps its table while writers append to it during runs,
// and every write succeeds and is counted.
func TestFlowDaysIngestWhilePruning(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		now := time.Now().Unix()
		// Ten expired days to drop while the writer appends to today.
		var old []record.Flow
		for d := range 10 {
			for i := range 20 {
				old = append(old, dayFlow(now-int64(d+2)*86400, i))
			}
		}
		if _, err := db.WriteFlows(ctx, old); err != nil {
			t.Fatal(err)
		}
		r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: 1, Interval: time.Hour}, db, nil)
		for _, table := range store.FlowTables {
			if err := r.Register(table, "ts"); err != nil {
				t.Fatal(err)
			}
		}
		var written atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var werr error
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := db.WriteFlows(context.Background(), []record.Flow{dayFlow(now-30, i)}); err != nil {
					werr = err
					return
				}
				written.Add(1)
			}
		})
		for range 3 {
			if _, err := r.RunOnce(ctx); err != nil {
				t.Error(err)
			}
		}
		time.Sleep(50 * time.Millisecond)
		close(stop)
		wg.Wait()
		if werr != nil {
			t.Fatalf("write during the prune: %v", werr)
		}
		if written.Load() == 0 {
			t.Fatal("no write completed during the prune")
		}
		if got := flowCount(t, db, "flow_minutes"); got[1] != written.Load() {
			t.Errorf("flow_minutes holds %d flows, %d written during the prune", got[1], written.Load())
		}
		days, err := db.FlowDays(ctx, "flow_minutes")
		if err != nil {
			t.Fatal(err)
		}
		if today := now - now%86400; days[0] != today && days[0] != today-86400 {
			t.Errorf("oldest day left %d, today %d", days[0], today)
		}
	})
}

// TestFlowDaysViewCrashSafe (SQLite): a drop that fails between dropping
// the day table and rebuilding the view rolls back whole, so the view
// never names a missing table; and after a reopen the views answer.
func TestFlowDaysViewCrashSafe(t *testing.T) {
	path := t.TempDir() + "/netmon.db"
	db := openFile(t, path)
	defer func() { _ = db.Close() }()
	ctx := t.Context()
	now := time.Now().Unix()
	if _, err := db.WriteFlows(ctx, []record.Flow{dayFlow(now-30*86400, 1), dayFlow(now-60, 2)}); err != nil {
		t.Fatal(err)
	}
	r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: 24, Interval: time.Hour}, db, nil)
	if err := r.Register("flow_minutes", "ts"); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("crash between drop and view")
	restore := store.SetFlowDayHook(func() error { return boom })
	if _, err := r.RunOnce(ctx); !errors.Is(err, boom) {
		t.Fatalf("RunOnce = %v, want the injected failure", err)
	}
	restore()
	if got := flowCount(t, db, "flow_minutes"); got != [2]int64{2, 2} {
		t.Fatalf("after the failed drop flow_minutes = %v, want both rows", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openFile(t, path)
	defer func() { _ = db.Close() }()
	r = store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: 24, Interval: time.Hour}, db, nil)
	if err := r.Register("flow_minutes", "ts"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := flowCount(t, db, "flow_minutes"); got != [2]int64{1, 1} {
		t.Errorf("after the drop flow_minutes = %v, want the current row", got)
	}
	var view string
	if err := db.Reader().QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'flow_minutes'`).Scan(&view); err != nil {
		t.Fatal(err)
	}
	if old := store.FlowDayTable("flow_minutes", now-30*86400); strings.Contains(view, old) {
		t.Errorf("view still names the dropped %s: %s", old, view)
	}
}

// TestFlowDaysQueryPlan (SQLite): the readers' time filter reaches every
// day table of the view and searches its ts index, and the address-pair
// query its pair index.
func TestFlowDaysQueryPlan(t *testing.T) {
	db := storetest.OpenSQLite(t)
	ctx := t.Context()
	now := time.Now().Unix()
	if _, err := db.WriteFlows(ctx, []record.Flow{dayFlow(now-2*86400, 1), dayFlow(now-86400, 2), dayFlow(now-60, 3)}); err != nil {
		t.Fatal(err)
	}
	plan := func(q string, args ...any) string {
		rows, err := db.Reader().QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			b.WriteString(detail + "\n")
		}
		return b.String()
	}
	top := plan(`SELECT exporter, src, SUM(octets) FROM flow_minutes WHERE ts >= $1 AND src <> '' GROUP BY exporter, src ORDER BY SUM(octets) DESC LIMIT 20`, now-900)
	pair := plan(`SELECT ts, SUM(octets) FROM flow_minutes WHERE ts >= $1 AND ((src = $2 AND dst = $3) OR (src = $3 AND dst = $2)) GROUP BY ts`, now-900, "10.1.0.1", "203.0.113.1")
	for d := now - 2*86400; d <= now; d += 86400 {
		name := store.FlowDayTable("flow_minutes", d)
		if want := "SEARCH " + name + " USING INDEX " + name + "_ts (ts>?)"; !strings.Contains(top, want) {
			t.Errorf("top flows plan lacks %q:\n%s", want, top)
		}
		if want := "SEARCH " + name + " USING INDEX " + name + "_pair (src=? AND dst=? AND ts>?)"; !strings.Contains(pair, want) {
			t.Errorf("pair plan lacks %q:\n%s", want, pair)
		}
	}
}

// openFile opens a store on the SQLite file path; the caller closes it.
func openFile(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(t.Context(), storetest.Logger(t), store.Config{DSN: path, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestFlowDaysDefaultRows: a row inserted into the parent for a day with
// no table lands in the default table (an insert never fails for a
// missing day); when the day's table is created, PostgreSQL moves it into
// the new partition (ATTACH requires it) and SQLite leaves it in the
// default; the totals read through the parent are the same.
func TestFlowDaysDefaultRows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		day := time.Now().Unix() - 5*86400
		day -= day % 86400
		if _, err := db.Writer().ExecContext(ctx, `INSERT INTO flow_minutes (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
			VALUES ($1, '192.0.2.9', '10.9.0.1', '10.9.0.2', 1, 2, 17, 1, 1, 42, $1, $1)`, day+7200); err != nil {
			t.Fatal(err)
		}
		if got := flowCount(t, db, "flow_minutes_default"); got != [2]int64{1, 42} {
			t.Fatalf("default before = %v, want [1 42]", got)
		}
		if err := db.EnsureFlowDays(ctx, day, day); err != nil {
			t.Fatal(err)
		}
		inDefault := int64(1)
		if db.Dialect() == store.Postgres {
			inDefault = 0
		}
		if got := flowCount(t, db, "flow_minutes_default"); got[0] != inDefault {
			t.Errorf("default after = %v, want %d rows", got, inDefault)
		}
		if got := flowCount(t, db, "flow_minutes"); got != [2]int64{1, 42} {
			t.Errorf("flow_minutes after = %v, want [1 42]", got)
		}
		if got := flowCount(t, db, store.FlowDayTable("flow_minutes", day)); got[0] != 1-inDefault {
			t.Errorf("day table = %v, want %d rows", got, 1-inDefault)
		}
	})
}

// TestFlowDaysUpgradedPartition (PostgreSQL): after 0014 the old table is
// the partition of every day up to the upgrade's (MINVALUE to the end of
// that day, named after it). Creating a day it covers counts as done, the
// writes of those days land in it, the next days get their own, and
// retention drops it whole once its last day expires.
func TestFlowDaysUpgradedPartition(t *testing.T) {
	db := storetest.OpenPostgres(t)
	ctx := t.Context()
	now := time.Now().Unix()
	today := now - now%86400
	legacy := store.FlowDayTable("flow_minutes", today-3*86400) // upgraded three days ago
	if _, err := db.Writer().ExecContext(ctx, `CREATE TABLE `+legacy+` (LIKE flow_minutes INCLUDING DEFAULTS);
		ALTER TABLE flow_minutes ATTACH PARTITION `+legacy+` FOR VALUES FROM (MINVALUE) TO (`+strconv.FormatInt(today-2*86400, 10)+`)`); err != nil {
		t.Fatal(err)
	}
	if err := db.EnsureFlowDays(ctx, today-10*86400, today); err != nil {
		t.Fatalf("days the old partition covers: %v", err)
	}
	if _, err := db.WriteFlows(ctx, []record.Flow{dayFlow(today-9*86400, 1), dayFlow(today-3*86400+60, 2), dayFlow(now-60, 3)}); err != nil {
		t.Fatal(err)
	}
	if got := flowCount(t, db, legacy); got[0] != 2 {
		t.Errorf("%s holds %v, want the 2 rows of the days it covers", legacy, got)
	}
	if got := flowCount(t, db, "flow_minutes_default"); got[0] != 0 {
		t.Errorf("default holds %v, want nothing", got)
	}
	// Retention of 4 days keeps it (its last day, today-3, ends after
	// the cutoff); of 2 days drops it, with its 2 rows.
	for _, tc := range []struct {
		hours int
		want  [2]int64
	}{{4 * 24, [2]int64{3, 3}}, {2 * 24, [2]int64{1, 1}}} {
		r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: tc.hours, Interval: time.Hour}, db, nil)
		if err := r.Register("flow_minutes", "ts"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if got := flowCount(t, db, "flow_minutes"); got != tc.want {
			t.Errorf("after a run keeping %d h: %v, want %v", tc.hours, got, tc.want)
		}
	}
}
