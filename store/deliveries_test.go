package store_test

import (
	"context"
	"fmt"
	"testing"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestDeliveries: the notifier's queue and log on both databases: due
// rows by channel and time, outcomes written back, the log's filters,
// the event kept as it fired, the ticket reference.
func TestDeliveries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ev, err := db.InsertAlertEvent(ctx, record.AlertEvent{TS: 100, Kind: "port", Key: "k", Message: "m|=\\", Severity: 9, State: "firing"})
		if err != nil {
			t.Fatal(err)
		}
		var ds []record.AlertDelivery
		for i, ch := range []string{"generic_url", "email", "generic_url"} {
			ds = append(ds, record.AlertDelivery{EventID: ev.ID, Channel: ch, Route: fmt.Sprint(i), CreatedTS: 100, NextTS: int64(100 + i*10), UpdatedTS: 100, Event: ev})
		}
		if err := db.InsertDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		due, err := db.DueDeliveries(ctx, "generic_url", 105, 10)
		if err != nil || len(due) != 1 || due[0].Route != "0" || due[0].Status != record.DeliveryPending || due[0].Event != ev {
			t.Fatalf("due at 105: %+v %v", due, err)
		}
		due, _ = db.DueDeliveries(ctx, "generic_url", 120, 10)
		if len(due) != 2 || due[0].NextTS != 100 || due[1].NextTS != 120 {
			t.Fatalf("due at 120: %+v", due)
		}
		due[0].Status, due[0].Attempts, due[0].UpdatedTS = record.DeliveryDelivered, 1, 121
		due[1].Attempts, due[1].NextTS, due[1].UpdatedTS, due[1].Error = 1, 200, 121, "remote answered 503 service unavailable"
		if err := db.FinishDeliveries(ctx, due); err != nil {
			t.Fatal(err)
		}
		if again, _ := db.DueDeliveries(ctx, "generic_url", 150, 10); len(again) != 0 {
			t.Errorf("due at 150 after the outcomes: %+v", again)
		}
		for _, tt := range []struct {
			f    store.DeliveryFilter
			want string
		}{
			{store.DeliveryFilter{}, "generic_url/pending/1 email/pending/0 generic_url/delivered/1"},
			{store.DeliveryFilter{Status: "delivered"}, "generic_url/delivered/1"},
			{store.DeliveryFilter{Channel: "email"}, "email/pending/0"},
			{store.DeliveryFilter{EventID: ev.ID + 1}, ""},
			{store.DeliveryFilter{EventID: ev.ID, Limit: 1}, "generic_url/pending/1"},
		} {
			log, err := db.Deliveries(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for i, d := range log {
				if i > 0 {
					got += " "
				}
				got += fmt.Sprintf("%s/%s/%d", d.Channel, d.Status, d.Attempts)
			}
			if got != tt.want {
				t.Errorf("Deliveries(%+v) = %q, want %q", tt.f, got, tt.want)
			}
		}
		if err := db.SetAlertExtRef(ctx, ev.ID, "INC-7"); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.AlertEvent(ctx, ev.ID); got.ExtRef != "INC-7" {
			t.Errorf("ext_ref %q", got.ExtRef)
		}
	})
}

// TestFinishDeliveriesGrouped: 1 203 outcomes, most of them the same
// (written by UPDATE ... IN, 500 ids at a time) and three that differ,
// each land on its own row.
func TestFinishDeliveriesGrouped(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ev, err := db.InsertAlertEvent(ctx, record.AlertEvent{TS: 100, Kind: "port", Key: "k", Message: "m", Severity: 9, State: "firing"})
		if err != nil {
			t.Fatal(err)
		}
		ds := make([]record.AlertDelivery, 1203)
		for i := range ds {
			ds[i] = record.AlertDelivery{EventID: ev.ID, Channel: "generic_url", CreatedTS: 100, NextTS: 100, UpdatedTS: 100, Event: ev}
		}
		if err := db.InsertDeliveries(ctx, ds); err != nil {
			t.Fatal(err)
		}
		due, err := db.DueDeliveries(ctx, "generic_url", 100, 2000)
		if err != nil || len(due) != 1203 {
			t.Fatalf("due: %d, %v", len(due), err)
		}
		for i := range due {
			due[i].Status, due[i].Attempts, due[i].UpdatedTS = record.DeliveryDelivered, 1, 101
		}
		due[7].Status, due[7].NextTS, due[7].Error = record.DeliveryPending, 300, "remote answered 503"
		due[600].Status, due[600].Error = record.DeliveryFailed, "remote answered 404"
		due[1202].Attempts = 2
		if err := db.FinishDeliveries(ctx, due); err != nil {
			t.Fatal(err)
		}
		if ok, _ := db.Deliveries(ctx, store.DeliveryFilter{Status: record.DeliveryDelivered, Limit: 1000}); len(ok) != 1000 {
			t.Errorf("%d delivered in the first page, want 1000", len(ok))
		}
		pending, _ := db.Deliveries(ctx, store.DeliveryFilter{Status: record.DeliveryPending})
		failed, _ := db.Deliveries(ctx, store.DeliveryFilter{Status: record.DeliveryFailed})
		if len(pending) != 1 || pending[0].ID != due[7].ID || pending[0].NextTS != 300 || pending[0].Error != "remote answered 503" ||
			len(failed) != 1 || failed[0].ID != due[600].ID || failed[0].Error != "remote answered 404" {
			t.Errorf("pending %+v failed %+v", pending, failed)
		}
		last, _ := db.Deliveries(ctx, store.DeliveryFilter{Limit: 1})
		if last[0].ID != due[1202].ID || last[0].Attempts != 2 || last[0].Status != record.DeliveryDelivered {
			t.Errorf("last %+v", last[0])
		}
		if again, _ := db.DueDeliveries(ctx, "generic_url", 200, 2000); len(again) != 0 {
			t.Errorf("%d still due", len(again))
		}
	})
}
