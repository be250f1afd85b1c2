package reports

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/app/reports/model"
	"netmon/store"
	"netmon/store/storetest"
)

// TestBuildRolledEqualsLive: every report the exact-content tests check
// (TestBuildTraffic, TestBuildEnterprise, TestBuildSite) is the same,
// field for field, once the seeded days are rolled up, in UTC (every
// day of the range from the rollup) and in a zone east of UTC (partial
// edge days read live), on both databases. With the hand-computed
// figures of those tests this makes the rolled-up reads exact too.
func TestBuildRolledEqualsLive(t *testing.T) {
	istanbul, err := time.LoadLocation("Europe/Istanbul")
	if err != nil {
		t.Fatal(err)
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		ctx := context.Background()
		type report struct {
			typ, site string
			loc       *time.Location
		}
		reports := []report{
			{model.TypeTraffic, "", time.UTC}, {model.TypeEnterprise, "", time.UTC}, {model.TypeEnterprise, "north", time.UTC},
			{model.TypeTraffic, "south", time.UTC}, {model.TypeEnterprise, "", istanbul}, {model.TypeTraffic, "north", istanbul},
		}
		buildAll := func() []*model.Report {
			var out []*model.Report
			for _, r := range reports {
				deps := storeDeps(db, &fakeSLA{f: badSLA}, fakeHealth{lowHealth})
				deps.Location = r.loc
				rep, err := NewBuilder(deps).Build(ctx, Request{Type: r.typ, Days: 3, Site: r.site, Now: seedNow})
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, rep)
			}
			return out
		}
		live := buildAll()
		job := NewRollup(nil, RollupConfig{MaxDays: 30}, db, func() time.Time { return seedNow }, nil)
		n, err := job.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// From the seed's oldest raw row (11-22, in the previous period)
		// to 11-26, the last closed day: 5 days.
		if n != 5 {
			t.Fatalf("rolled %d days, want 5", n)
		}
		rolled := buildAll()
		for i := range reports {
			if d := cmp.Diff(live[i], rolled[i]); d != "" {
				t.Errorf("%+v (-live +rolled):\n%s", reports[i], d)
			}
		}
	})
}

// TestRollupJob: a pass rolls up at most MaxDays closed days, newest
// first; the next pass the rest; then nothing (a day is never rolled
// twice). The open day (today, and yesterday within the grace) is left.
func TestRollupJob(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		ctx := context.Background()
		var days []int64
		rec := rollupRecorder{RollupStore: db, days: &days}
		job := NewRollup(nil, RollupConfig{MaxDays: 2}, rec, func() time.Time { return seedNow }, nil)
		total := 0
		for pass := 0; pass < 20; pass++ {
			n, err := job.RunOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n > 2 {
				t.Fatalf("pass %d rolled %d days, bound 2", pass, n)
			}
			if n == 0 {
				break
			}
			total += n
		}
		if total != len(days) || total == 0 {
			t.Fatalf("rolled %d, calls %v", total, days)
		}
		// Newest first, each day once, the last closed day 11-26.
		if days[0] != seedAt(26, 0, 0) {
			t.Errorf("first day rolled %v, want 2026-11-26", time.Unix(days[0], 0).UTC())
		}
		seen := map[int64]bool{}
		for i, d := range days {
			if seen[d] || (i > 0 && d >= days[i-1]) {
				t.Errorf("days rolled out of order or twice: %v", days)
			}
			seen[d] = true
		}
		// Within the grace after midnight the day just ended stays open.
		job = NewRollup(nil, RollupConfig{}, db, func() time.Time { return time.Unix(seedAt(28, 1, 0), 0) }, nil)
		if n, err := job.RunOnce(ctx); err != nil || n != 0 {
			t.Errorf("at 01:00 rolled %d (%v), want 0: 11-27 has data but is in its grace", n, err)
		}
	})
}

// rollupRecorder records the days the job rolls.
type rollupRecorder struct {
	RollupStore
	days *[]int64
}

func (r rollupRecorder) RollupReportDay(ctx context.Context, day, now int64) (bool, error) {
	ok, err := r.RollupStore.RollupReportDay(ctx, day, now)
	if ok {
		*r.days = append(*r.days, day)
	}
	return ok, err
}

// TestRollupStartStop: Start runs a pass at once; Stop returns.
func TestRollupStartStop(t *testing.T) {
	db := storetest.OpenSQLite(t)
	seed(t, db)
	job := NewRollup(nil, RollupConfig{Every: time.Hour}, db, func() time.Time { return seedNow }, nil)
	if err := job.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pending, err := db.ReportRollupPending(context.Background(), seedNow.Unix(), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still pending after Start: %v", pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := job.Start(); err == nil {
		t.Error("second Start accepted")
	}
	if err := job.Stop(); err != nil {
		t.Fatal(err)
	}
}

// TestDestinationsCaptionAtLeast: when a rolled-up day kept only its
// busiest destinations, the caption says the count is a lower bound;
// otherwise it states it as exact.
func TestDestinationsCaptionAtLeast(t *testing.T) {
	for _, c := range []struct {
		atLeast bool
		want    string
	}{
		{false, "By country (the 2 busiest of 30 000 destination addresses)"},
		{true, "By country (the 2 busiest of at least 30 000 destination addresses)"},
	} {
		f := &reportFacts{destinations: &destFacts{addrs: 2, total: 30000, atLeast: c.atLeast, geo: true,
			countries: []keyBytes{{"DE", 10}}, asns: []keyBytes{{"AS3320", 10}}}}
		s := NewBuilder(BuildDeps{}).destinationsSection(f)
		if len(s.Blocks) == 0 || s.Blocks[0].Table == nil || s.Blocks[0].Table.Caption != c.want {
			t.Errorf("atLeast %v: blocks %+v, want caption %q", c.atLeast, s.Blocks, c.want)
		}
	}
}
