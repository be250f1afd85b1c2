package notify

import (
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestRetryAcrossRestart: the receiver is down for 20 s; the first
// notifier tries and fails, stops (a hub restart) with the delivery
// pending, a second one on the same database goes on retrying, the
// receiver comes up and gets the event exactly once.
func TestRetryAcrossRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 25 s")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // down: connections are refused
	dsn := filepath.Join(t.TempDir(), "netmon.db")
	open := func() *store.DB {
		db, err := store.Open(t.Context(), storetest.Logger(t), store.Config{DSN: dsn, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	box := newBox(Settings{GenericURL: "http://" + addr + "/hook"})
	start := time.Now()

	db1 := open()
	n1, _ := startNotifier(t, db1, testConfig(), box, Deps{})
	n1.Offer(portEvent)
	time.Sleep(4 * time.Second)
	if err := n1.Stop(); err != nil {
		t.Fatal(err)
	}
	retries := testutil.ToFloat64(n1.m.results.WithLabelValues(GenericURL, "retry"))
	if retries < 2 {
		t.Errorf("%v failed attempts before the restart, want at least 2", retries)
	}
	pending, err := db1.Deliveries(t.Context(), store.DeliveryFilter{Status: record.DeliveryPending})
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending after stop: %v %v, want 1", pending, err)
	}
	db1.Close()

	db2 := open()
	t.Cleanup(func() { _ = db2.Close() }) // after n2 stops (cleanups run last first)
	n2, _ := startNotifier(t, db2, testConfig(), box, Deps{})
	time.Sleep(time.Until(start.Add(20 * time.Second)))
	rec := &recorder{}
	l2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(l2) }()
	defer srv.Close()

	ds := waitDeliveries(t, db2, record.DeliveryDelivered, 1, 10*time.Second)
	time.Sleep(3 * time.Second) // would a second send happen?
	if got := len(rec.requests()); got != 1 {
		t.Errorf("receiver got %d requests, want exactly 1", got)
	}
	if d := ds[0]; d.Attempts < 4 || d.EventID != 42 {
		t.Errorf("delivery %+v, want event 42 after several attempts", d)
	}
	if v := testutil.ToFloat64(n2.m.results.WithLabelValues(GenericURL, "delivered")); v != 1 {
		t.Errorf("delivered counter %v, want 1", v)
	}
}
