package store_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/storetest"
)

func insertSchedule(t *testing.T, db *store.DB, s store.ReportSchedule) int64 {
	t.Helper()
	var id int64
	if err := db.InTx(t.Context(), func(tx *store.Tx) error {
		var err error
		id, err = tx.InsertReportSchedule(t.Context(), s)
		return err
	}); err != nil {
		t.Fatalf("InsertReportSchedule: %v", err)
	}
	return id
}

func insertArchive(t *testing.T, db *store.DB, a store.ReportArchive) int64 {
	t.Helper()
	var id int64
	if err := db.InTx(t.Context(), func(tx *store.Tx) error {
		var err error
		id, err = tx.InsertReportArchive(t.Context(), a)
		return err
	}); err != nil {
		t.Fatalf("InsertReportArchive: %v", err)
	}
	return id
}

// TestReportSchedules: a schedule round-trips; site scoping makes
// another site's id ErrNotFound like a missing one; a slot is claimed
// once, a slot not later than the last one never.
func TestReportSchedules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		in := store.ReportSchedule{Name: "Monday traffic", Type: "traffic", Days: 7, Format: "pdf", Site: "istanbul",
			Recipients: []string{"noc@example.test", "boss@example.test"}, Spec: "weekly:mon:07:30",
			Timezone: "Europe/Istanbul", Enabled: true, CreatedAt: 1795000000, CreatedBy: "alice"}
		id := insertSchedule(t, db, in)
		other := insertSchedule(t, db, store.ReportSchedule{Name: "all", Type: "enterprise", Days: 30, Format: "html",
			Spec: "daily:06:00", Timezone: "UTC", Enabled: true, CreatedAt: 1795000001})
		in.ID = id
		got, err := db.GetReportSchedule(ctx, "istanbul", id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, in); diff != "" {
			t.Errorf("GetReportSchedule (-got, +want):\n%s", diff)
		}
		for _, tt := range []struct {
			desc string
			site string
			id   int64
		}{
			{"another site's id", "ankara", id},
			{"a missing id", "", 999},
			{"an all-sites schedule from a site", "istanbul", other},
		} {
			if _, err := db.GetReportSchedule(ctx, tt.site, tt.id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s: GetReportSchedule error %v, want ErrNotFound", tt.desc, err)
			}
		}
		for site, want := range map[string]int{"": 2, "istanbul": 1, "ankara": 0} {
			l, err := db.ListReportSchedules(ctx, site)
			if err != nil || len(l) != want {
				t.Errorf("ListReportSchedules(%q): %d rows (%v), want %d", site, len(l), err, want)
			}
		}
		for _, tt := range []struct {
			desc string
			slot int64
			want bool
		}{
			{"first claim of a slot", 1795100000, true},
			{"same slot again", 1795100000, false},
			{"an earlier slot", 1795000000, false},
			{"the next slot", 1795186400, true},
		} {
			ok, err := db.ClaimReportSlot(ctx, id, tt.slot, "running")
			if err != nil || ok != tt.want {
				t.Errorf("%s: ClaimReportSlot = %v, %v; want %v", tt.desc, ok, err, tt.want)
			}
		}
		if err := db.SetReportScheduleStatus(ctx, id, "sent to 2"); err != nil {
			t.Fatal(err)
		}
		got, _ = db.GetReportSchedule(ctx, "", id)
		if got.LastSlot != 1795186400 || got.LastStatus != "sent to 2" {
			t.Errorf("after claims: last_slot %d status %q, want 1795186400 \"sent to 2\"", got.LastSlot, got.LastStatus)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteReportSchedule(ctx, "ankara", id) })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete from another site: %v, want ErrNotFound", err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteReportSchedule(ctx, "istanbul", id) }); err != nil {
			t.Errorf("delete: %v", err)
		}
	})
}

// TestReportSlotRace: hubs claiming one slot at once: exactly one wins.
func TestReportSlotRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		id := insertSchedule(t, db, store.ReportSchedule{Name: "x", Type: "traffic", Days: 7, Format: "html",
			Spec: "daily:06:00", Timezone: "UTC", Enabled: true})
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ok, err := db.ClaimReportSlot(t.Context(), id, 1795100000, "running")
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Errorf("%d claims won, want 1", wins.Load())
		}
	})
}

// TestReportArchive: newest first, without bodies in lists; the body
// round-trips byte for byte; site scoping; pruning by age and by count.
func TestReportArchive(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		body := []byte("%PDF-1.7\x00\xff binary body")
		a := store.ReportArchive{ScheduleID: 3, Type: "traffic", Format: "pdf", Site: "lyon", Days: 7, From: 100, To: 200,
			Filename: "netmon-traffic-lyon-19700101-19700101.pdf", ContentType: "application/pdf",
			SHA256: "aa", DataSHA256: "bb", GeneratedAt: 1000, GeneratedBy: "scheduler", Body: body}
		ids := []int64{insertArchive(t, db, a)}
		for i, at := range []int64{2000, 3000} {
			b := a
			b.Site, b.GeneratedAt, b.Body = []string{"", "lyon"}[i], at, []byte{byte(i)}
			ids = append(ids, insertArchive(t, db, b))
		}
		l, err := db.ListReportArchive(ctx, "", 10)
		if err != nil || len(l) != 3 || l[0].ID != ids[2] || l[2].ID != ids[0] || l[0].Body != nil {
			t.Fatalf("ListReportArchive: %d rows %+v (%v), want 3 newest first without body", len(l), l, err)
		}
		if l, _ := db.ListReportArchive(ctx, "lyon", 10); len(l) != 2 {
			t.Errorf("lyon's archive: %d rows, want 2", len(l))
		}
		got, err := db.GetReportArchive(ctx, "lyon", ids[0])
		if err != nil {
			t.Fatal(err)
		}
		a.ID, a.Size = ids[0], int64(len(body))
		if diff := cmp.Diff(got, a); diff != "" {
			t.Errorf("GetReportArchive (-got, +want):\n%s", diff)
		}
		if _, err := db.GetReportArchive(ctx, "paris", ids[0]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another site's report: %v, want ErrNotFound", err)
		}
		if err := db.SetReportDelivery(ctx, ids[0], "sent to 1"); err != nil {
			t.Fatal(err)
		}
		if n, b, err := db.ReportArchiveSize(ctx); err != nil || n != 3 || b != int64(len(body))+2 {
			t.Errorf("ReportArchiveSize = %d, %d, %v; want 3, %d", n, b, err, len(body)+2)
		}
		// Age: the one generated at 1000 goes; count: of the two left, keep 1.
		if n, err := db.PruneReportArchive(ctx, 1500, 1); err != nil || n != 2 {
			t.Errorf("PruneReportArchive = %d, %v; want 2", n, err)
		}
		if l, _ := db.ListReportArchive(ctx, "", 10); len(l) != 1 || l[0].ID != ids[2] {
			t.Errorf("after prune: %+v, want only id %d", l, ids[2])
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteReportArchive(ctx, "paris", ids[2]) })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete from another site: %v, want ErrNotFound", err)
		}
	})
}
