package syslog

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"netmon/store/record"
)

// panickingSink panics on its first batch, then keeps what it is given.
type panickingSink struct {
	memSink
	calls atomic.Int32
}

func (s *panickingSink) PutSyslog(es []record.SyslogEvent) bool {
	if s.calls.Add(1) == 1 {
		panic("injected")
	}
	return s.memSink.PutSyslog(es)
}

// TestWorkerPanicKeepsReceiving (RELIABILITY case 33): a panic in a
// worker (here the sink's, standing for a parser meeting a hostile
// datagram) loses the batch in hand, is counted in netmon_panics_total
// {component="syslog"}, and the worker receives the next datagrams; the
// process is not taken down.
func TestWorkerPanicKeepsReceiving(t *testing.T) {
	sink := &panickingSink{}
	r := startReceiver(t, Config{Workers: 1, FlushInterval: 10 * time.Millisecond}, sink)
	conn, err := net.Dial("udp", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("<13>first")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.guard.Count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := conn.Write([]byte("<13>second")); err != nil {
		t.Fatal(err)
	}
	for len(sink.snapshot()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := sink.snapshot(); len(got) != 1 || got[0].Message != "second" {
		t.Fatalf("after the panic the sink holds %+v; want the second message", got)
	}
	if n := r.guard.Count(); n != 1 {
		t.Errorf("panics counted %v, want 1", n)
	}
}
