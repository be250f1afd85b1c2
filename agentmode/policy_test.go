package agentmode

import (
	"context"
	"sync"
	"testing"

	"netmon/agentmode/wire"
)

// deepSource is a Source that runs deep collection as collect.Collector
// does: sections while the hub's policy allows it, none after.
type deepSource struct {
	mu      sync.Mutex
	enabled bool
	calls   []bool // the policy in force at each SetHubPolicy
	stopped bool
}

func (s *deepSource) Collect(context.Context) wire.Telemetry {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := wire.Telemetry{Interfaces: []wire.Interface{}, Connections: []wire.Connection{}, AttrMethod: "off", AttrNote: "hub policy -agent-pcap=false"}
	if s.enabled {
		t.AttrMethod, t.AttrNote = "pcap", ""
		t.Processes = []wire.ProcessTraffic{{Process: "curl", PID: 42, BytesIn: 100}}
		t.DNS = []wire.DNSObservation{{Domain: "a.test", Process: "curl", PID: 42, Queries: 1}}
	}
	return t
}

func (s *deepSource) SetHubPolicy(enabled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.enabled = enabled
	s.calls = append(s.calls, enabled)
}

func (s *deepSource) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	return nil
}

// TestHubPcapPolicy: the hub's pcap_enabled=false in a telemetry answer
// removes the deep sections from the next batch on, the policy survives a
// restart through the state file, and turning it back on restores them.
func TestHubPcapPolicy(t *testing.T) {
	hub := newFakeHub(t, nil)
	dir := t.TempDir()
	ta := newAgent(t, hub, dir, nil, nil)
	src := &deepSource{}
	ta.source = src
	if err := ta.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	// The first batch was taken before the hello's answer, under the
	// policy of the (empty) state file: enabled.
	if b := hub.seenNow().batches[0]; len(b.Processes) != 1 || len(b.DNS) != 1 {
		t.Fatalf("first batch without sections: %+v", b)
	}

	hub.setPcapPolicy(false)
	ta.tick(t) // batch 2 is answered with pcap_enabled=false
	waitFor(t, "batch 2", func() bool { return len(hub.seenNow().batches) == 2 })
	waitFor(t, "the policy to be saved", func() bool { return ta.store.Get().PcapDisabled })
	ta.tick(t)
	waitFor(t, "batch 3", func() bool { return len(hub.seenNow().batches) == 3 })
	withSections := 0
	for _, b := range hub.seenNow().batches {
		if len(b.Processes)+len(b.L7)+len(b.DNS) > 0 {
			withSections++
		}
	}
	if withSections != 2 || hub.seenNow().batches[2].AttrMethod != "off" {
		t.Fatalf("%d batches with sections, want 2 (those taken before the answer)", withSections)
	}
	if err := ta.Stop(); err != nil || !src.stopped {
		t.Fatalf("stop: %v, source stopped %v", err, src.stopped)
	}

	// A restart honours the saved policy before hearing from the hub.
	ta2 := newAgent(t, hub, dir, nil, nil)
	src2 := &deepSource{}
	ta2.source = src2
	if err := ta2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ta2.Stop() }()
	if len(src2.calls) == 0 || src2.calls[0] {
		t.Fatalf("policy at start %v, want disabled first", src2.calls)
	}
	waitFor(t, "batch 4", func() bool { return len(hub.seenNow().batches) == 4 })
	if b := hub.seenNow().batches[3]; len(b.Processes) != 0 {
		t.Fatalf("batch after restart has sections: %+v", b)
	}
	hub.setPcapPolicy(true)
	ta2.tick(t)
	waitFor(t, "batch 5", func() bool { return len(hub.seenNow().batches) == 5 })
	ta2.tick(t)
	waitFor(t, "batch 6", func() bool { return len(hub.seenNow().batches) == 6 })
	if b := hub.seenNow().batches[5]; len(b.Processes) != 1 {
		t.Fatalf("sections not back after the hub allowed them: %+v", b)
	}
}
