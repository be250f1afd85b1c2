package capture

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store/record"
)

// TestAlertInputs: the capture hands the alert engine its snapshot's
// rates and remote endpoints (local ones left out) and its DNS domains as
// agent 0's names, TS the queries and responses (dns.pcap's golden
// snapshot: testdata/golden/capture/dns.pcap.json).
func TestAlertInputs(t *testing.T) {
	c := New(slog.New(slog.DiscardHandler), DefaultConfig(), Deps{})
	if diff := cmp.Diff(c.Traffic(), record.Traffic{}); diff != "" {
		t.Errorf("traffic before any capture (-got, +want):\n%s", diff)
	}
	if ns, err := c.Names(context.Background(), time.Time{}); err != nil || ns != nil {
		t.Errorf("names before any capture: %v, %v", ns, err)
	}

	c.engine, _ = replayFile(t, "dns.pcap")
	want := record.Traffic{InBps: 11632, OutBps: 3264, Endpoints: []record.TrafficEndpoint{
		{IP: "93.184.216.34", Total: 3416}, {IP: "8.8.8.8", Total: 1830}, {IP: "203.0.113.66", Total: 308}}}
	if diff := cmp.Diff(c.Traffic(), want); diff != "" {
		t.Errorf("traffic (-got, +want):\n%s", diff)
	}
	ns, err := c.Names(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	dns := func(name string, ts int64) record.ObservedName {
		return record.ObservedName{Name: name, Source: "dns", TS: ts}
	}
	wantNames := []record.ObservedName{dns("www.example.com", 6), dns("\x1b[31mred\x00.evil.test", 2), dns("<img src=x onerror=alert(1)>.evil.test", 2),
		dns("many.example.org", 2), dns("mixed.example.com", 2), dns("nosuch.example.org", 2), dns("tcp.example.com", 2)}
	if diff := cmp.Diff(ns, wantNames); diff != "" {
		t.Errorf("names (-got, +want):\n%s", diff)
	}
}
