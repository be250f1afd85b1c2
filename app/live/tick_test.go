package live

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"netmon/capture"
	"netmon/capture/pcaprec"
	"netmon/capture/proc"
	"netmon/store/record"
)

// TestTickConnectionsCapped: a host with 3 000 sockets sends the 200 most
// active in a tick (established first, then by count) and the total; the
// tick stays small (it was 419 KB with 2 676 sockets).
func TestTickConnectionsCapped(t *testing.T) {
	var cs []proc.Connection
	for i := range 3000 {
		c := proc.Connection{Conn: proc.Conn{Proto: "tcp", LocalAddr: fmt.Sprintf("10.0.0.1:%d", 20000+i), RemoteAddr: fmt.Sprintf("203.0.113.%d:443", i%250), Status: "TIME_WAIT", PID: 1, Process: "curl"}, Count: 1}
		switch {
		case i%10 == 0:
			c.Status = "ESTABLISHED"
		case i%10 == 1:
			c.Status, c.RemoteAddr = "LISTEN", "*:*"
		}
		if i == 2999 {
			c.Count = 7 // the busiest established one
			c.Status = "ESTABLISHED"
		}
		cs = append(cs, c)
	}
	top := topConnections(cs, TickConnections)
	if len(top) != TickConnections {
		t.Fatalf("%d connections in the tick, want %d", len(top), TickConnections)
	}
	if top[0].Count != 7 {
		t.Errorf("first entry %+v, want the established socket with count 7", top[0])
	}
	for i, c := range top {
		if c.Status != "ESTABLISHED" {
			t.Fatalf("entry %d is %s while established sockets were left out", i, c.Status)
		}
	}
	raw, err := json.Marshal(Tick{Type: "tick", Connections: top, ConnectionsTotal: len(cs), AlertEvents: []AlertEvent{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 64<<10 {
		t.Errorf("tick of %d bytes with the cap", len(raw))
	}
	var back struct {
		Total int `json:"connections_total"`
	}
	if err := json.Unmarshal(raw, &back); err != nil || back.Total != 3000 {
		t.Errorf("connections_total %d (%v), want 3000", back.Total, err)
	}
	// Fewer sockets than the cap: all of them, in their order.
	if got := topConnections(cs[:5], TickConnections); len(got) != 5 || got[1].LocalAddr != cs[1].LocalAddr {
		t.Errorf("short list changed: %v", got)
	}
}

type stillCapture struct{}

func (stillCapture) Snapshot() capture.Snapshot   { return capture.Snapshot{} }
func (stillCapture) RecordStatus() pcaprec.Status { return pcaprec.Status{} }

type noSockets struct{}

func (noSockets) Cached(context.Context, time.Duration) ([]proc.Conn, error) { return nil, nil }

type alertQueue struct{ batches [][]record.AlertEvent }

func (q *alertQueue) Drain() []record.AlertEvent {
	if len(q.batches) == 0 {
		return nil
	}
	b := q.batches[0]
	q.batches = q.batches[1:]
	return b
}

// TestTickAlertEvents: a tick carries the alert events stored since the
// previous one, as {id, ts, kind, key, message}, and [] when there are
// none (spec 6.1).
func TestTickAlertEvents(t *testing.T) {
	q := &alertQueue{batches: [][]record.AlertEvent{{{ID: 7, TS: 1000, Kind: "port", Key: "3|198.51.100.7:4444", Message: "m", Severity: 5}}}}
	tk := NewTicker(slog.New(slog.DiscardHandler), stillCapture{}, noSockets{}, nil, q)
	for i, want := range []string{
		`"alert_events":[{"id":7,"ts":1000,"kind":"port","key":"3|198.51.100.7:4444","message":"m"}]`,
		`"alert_events":[]`,
	} {
		tick, err := tk.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(tick)
		if !strings.Contains(string(raw), want) {
			t.Errorf("tick %d: %s lacks %s", i, raw, want)
		}
	}
}
