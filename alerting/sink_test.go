package alerting_test

import (
	"context"
	"testing"
	"time"

	"netmon/alerting"
	"netmon/alerting/notify"
	"netmon/store/record"
	"netmon/store/storetest"
)

// recordSink keeps what the engine offers.
type recordSink struct{ got []record.AlertEvent }

func (s *recordSink) Offer(ev record.AlertEvent) bool { s.got = append(s.got, ev); return true }

// TestSinkGetsNewAndResolvedEvents: each stored event is offered once (a
// repeat is not), and an auto-resolved one is offered again as resolved.
func TestSinkGetsNewAndResolvedEvents(t *testing.T) {
	db := storetest.OpenSQLite(t)
	c := newClock()
	sink := &recordSink{}
	s := alerting.DefaultSettings()
	s.AutoResolveMin = 1
	e := newEngine(t, db, c, s, alerting.Deps{Sink: sink})
	ctx := context.Background()
	e.Raise(ctx, bwAlert("k"), portAlert("paris", "1|198.51.100.7:4444"))
	e.Raise(ctx, bwAlert("k")) // a repeat: counted, not offered
	if len(sink.got) != 2 || sink.got[0].Kind != "bw" || sink.got[1].Kind != "port" || sink.got[1].Site != "paris" || sink.got[0].ID == 0 {
		t.Fatalf("offered %+v, want the two stored events", sink.got)
	}
	c.advance(2 * time.Minute)
	e.EvalSnapshot(ctx)
	if len(sink.got) != 4 {
		t.Fatalf("offered %d events after auto-resolve, want 4", len(sink.got))
	}
	for _, ev := range sink.got[2:] {
		if ev.State != record.AlertResolved || ev.ID == 0 {
			t.Errorf("resolved offer %+v", ev)
		}
	}
}

// TestEngineNeverWaitsOnDelivery: with a real notifier whose queue holds
// one event and whose channels are never read (not started), raising
// 1 000 conditions completes (a blocking Offer would hang here): the
// full queue drops, counted.
func TestEngineNeverWaitsOnDelivery(t *testing.T) {
	db := storetest.OpenSQLite(t)
	cfg := notify.DefaultConfig()
	cfg.QueueSize = 1
	n := notify.New(quiet(), cfg, notify.Deps{Store: db}, nil) // not started: nobody reads the queue
	e := newEngine(t, db, newClock(), alerting.DefaultSettings(), alerting.Deps{Sink: n})
	start := time.Now()
	for i := 0; i < 1000; i++ {
		e.Raise(context.Background(), bwAlert(string(rune('a'+i%26))+time.Duration(i).String()))
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("1 000 raises took %s", d)
	}
	if got := len(events(t, db)); got != 1000 {
		t.Errorf("%d events stored, want 1000", got)
	}
}
