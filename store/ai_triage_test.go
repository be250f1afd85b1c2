package store_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

func TestTriageReads(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		inc, al, err := db.TriageHighWater(ctx)
		if err != nil || inc != 0 || al != 0 {
			t.Fatalf("TriageHighWater on an empty database = %d, %d, %v; want 0, 0, nil", inc, al, err)
		}
		// Severities 2, 5, 7, 9, 10 for both kinds, in that id order.
		sevs := []int{2, 5, 7, 9, 10}
		var alertIDs, incIDs []int64
		for i, s := range sevs {
			e, err := db.InsertAlertEvent(ctx, record.AlertEvent{TS: int64(100 + i), Kind: "port", Key: fmt.Sprint(i), Message: "m", Severity: s, State: "firing"})
			if err != nil {
				t.Fatal(err)
			}
			alertIDs = append(alertIDs, e.ID)
			in, _, err := db.UpsertIncident(ctx, record.Incident{Key: fmt.Sprintf("r1|agent%d", i), Rule: 1, Severity: s, Title: "t", OpenedTS: int64(100 + i), UpdatedTS: int64(100 + i)}, []int64{e.ID})
			if err != nil {
				t.Fatal(err)
			}
			incIDs = append(incIDs, in.ID)
		}
		tests := []struct {
			desc        string
			after       int64
			minSeverity int
			limit       int
			want        []int // indexes into sevs
		}{
			{desc: "all from the start", after: 0, minSeverity: 0, want: []int{0, 1, 2, 3, 4}},
			{desc: "at or above 7", after: 0, minSeverity: 7, want: []int{2, 3, 4}},
			{desc: "above 10 is nothing", after: 0, minSeverity: 11, want: []int{}},
			{desc: "after the third", after: 2, minSeverity: 0, want: []int{3, 4}},
			{desc: "limit keeps the lowest ids", after: 0, minSeverity: 5, limit: 2, want: []int{1, 2}},
			{desc: "after the last is nothing", after: 4, minSeverity: 0, want: []int{}},
		}
		for _, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				// after is an index into the ids (the ids of the two tables differ on
				// neither dialect here, but the test does not rely on it).
				afterInc, afterAl := int64(0), int64(0)
				if tt.after > 0 {
					afterInc, afterAl = incIDs[tt.after], alertIDs[tt.after]
				}
				wantInc, wantAl := []int64{}, []int64{}
				for _, i := range tt.want {
					wantInc, wantAl = append(wantInc, incIDs[i]), append(wantAl, alertIDs[i])
				}
				gotInc, err := db.TriageIncidents(ctx, afterInc, tt.minSeverity, tt.limit)
				if err != nil {
					t.Fatal(err)
				}
				ids := []int64{}
				for _, i := range gotInc {
					ids = append(ids, i.ID)
				}
				if diff := cmp.Diff(ids, wantInc); diff != "" {
					t.Errorf("TriageIncidents ids (-got, +want):\n%s", diff)
				}
				gotAl, err := db.TriageAlertEvents(ctx, afterAl, tt.minSeverity, tt.limit)
				if err != nil {
					t.Fatal(err)
				}
				ids = []int64{}
				for _, e := range gotAl {
					ids = append(ids, e.ID)
				}
				if diff := cmp.Diff(ids, wantAl); diff != "" {
					t.Errorf("TriageAlertEvents ids (-got, +want):\n%s", diff)
				}
			})
		}
		// The rows come back whole (the assessment names them).
		got, err := db.TriageIncidents(ctx, incIDs[3], 0, 0)
		if err != nil || len(got) != 1 {
			t.Fatalf("TriageIncidents after the fourth = %v, %v; want the fifth", got, err)
		}
		if got[0].Key != "r1|agent4" || got[0].Severity != 10 || got[0].State != record.IncidentOpen || got[0].OpenedTS != 104 {
			t.Errorf("incident read back = %+v", got[0])
		}
		inc, al, err = db.TriageHighWater(ctx)
		if err != nil || inc != incIDs[4] || al != alertIDs[4] {
			t.Errorf("TriageHighWater = %d, %d, %v; want %d, %d, nil", inc, al, err, incIDs[4], alertIDs[4])
		}
	})
}
