package collect

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/capture/attr"
)

// fakeBackend reports one fixed interval per Collect.
type fakeBackend struct {
	collects, stops int
}

func (f *fakeBackend) Method() string { return "pcap" }
func (f *fakeBackend) Iface() string  { return "eth9" }
func (f *fakeBackend) Collect() attr.Report {
	f.collects++
	return attr.Report{
		Processes: []wire.ProcessTraffic{{Process: "curl", PID: 42, BytesIn: 1000}},
		L7:        []wire.L7Observation{{Host: "a.test", Kind: wire.KindTLS, Process: "curl", PID: 42, Hits: 1}},
		DNS:       []wire.DNSObservation{{Domain: "a.test", Process: "curl", PID: 42, Queries: 1}},
	}
}
func (f *fakeBackend) Stop() error { f.stops++; return nil }

func TestDeepCollection(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)

	t.Run("a running backend fills the sections", func(t *testing.T) {
		fb := &fakeBackend{}
		c := New(log, Config{Method: "auto"})
		c.counters = func(context.Context) ([]wire.Interface, error) { return nil, nil }
		var gotCfg attr.Config
		c.open = func(_ *slog.Logger, cfg attr.Config) (attr.Backend, attr.Status) {
			gotCfg = cfg
			return fb, attr.Status{Method: "pcap", Iface: "eth9", Note: "ebpf: needs CAP_BPF and CAP_PERFMON, or root"}
		}
		b := c.Collect(ctx)
		if b.AttrMethod != "pcap" || b.AttrIface != "eth9" || b.AttrNote != "ebpf: needs CAP_BPF and CAP_PERFMON, or root" {
			t.Errorf("attr %q %q %q", b.AttrMethod, b.AttrIface, b.AttrNote)
		}
		if len(b.Processes) != 1 || len(b.L7) != 1 || len(b.DNS) != 1 || gotCfg.Snaplen != 600 || gotCfg.Method != "auto" {
			t.Errorf("sections %+v, cfg %+v", b, gotCfg)
		}
		// The hub turns it off: the very next batch has no sections and
		// the backend is stopped; back on, it starts again at once.
		c.SetHubPolicy(false)
		b = c.Collect(ctx)
		if b.Processes != nil || b.L7 != nil || b.DNS != nil || b.AttrMethod != "off" || b.AttrNote != NoteHubPolicy || fb.stops != 1 {
			t.Errorf("after policy off: %+v, stops %d", b, fb.stops)
		}
		c.SetHubPolicy(true)
		if b = c.Collect(ctx); b.AttrMethod != "pcap" || len(b.Processes) != 1 {
			t.Errorf("after policy on: %+v", b)
		}
		if err := c.Stop(); err != nil || fb.stops != 2 {
			t.Errorf("stop: %v, stops %d", err, fb.stops)
		}
	})

	t.Run("collect.method off never opens a backend", func(t *testing.T) {
		c := New(log, Config{Method: "off"})
		c.counters = func(context.Context) ([]wire.Interface, error) { return nil, nil }
		c.open = func(*slog.Logger, attr.Config) (attr.Backend, attr.Status) {
			t.Fatal("opened")
			return nil, attr.Status{}
		}
		if b := c.Collect(ctx); b.AttrMethod != "off" || b.AttrNote != NoteMethodOff || b.Processes != nil {
			t.Errorf("%+v", b)
		}
	})

	t.Run("a refusal is retried after RetryEvery, not every batch", func(t *testing.T) {
		c := New(log, Config{Method: "pcap"})
		c.counters = func(context.Context) ([]wire.Interface, error) { return nil, nil }
		now := t0
		c.now = func() time.Time { return now }
		opens := 0
		c.open = func(*slog.Logger, attr.Config) (attr.Backend, attr.Status) {
			opens++
			return nil, attr.Status{Method: "off", Note: "pcap: needs CAP_NET_RAW or root"}
		}
		for range 3 {
			if b := c.Collect(ctx); b.AttrMethod != "off" || b.AttrNote != "pcap: needs CAP_NET_RAW or root" {
				t.Errorf("%+v", b)
			}
		}
		now = now.Add(RetryEvery)
		c.Collect(ctx)
		if opens != 2 {
			t.Errorf("opened %d times, want 2", opens)
		}
	})
}

func TestCollectRealHost(t *testing.T) {
	c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), DefaultConfig())
	b := c.Collect(context.Background())
	if b.Interfaces == nil || b.Connections == nil {
		t.Fatal("nil slices: the hub expects arrays")
	}
	if len(b.Interfaces) == 0 {
		t.Error("no interface counters on this host")
	}
	if b.AttrMethod == "" || b.AttrMethod == "off" && b.AttrNote == "" {
		t.Errorf("attr %q %q: off without a reason", b.AttrMethod, b.AttrNote)
	}
	if err := c.Stop(); err != nil {
		t.Error(err)
	}
}

func TestCollectSurvivesCounterFailure(t *testing.T) {
	c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), DefaultConfig())
	c.counters = func(context.Context) ([]wire.Interface, error) { return nil, errors.New("boom") }
	b := c.Collect(context.Background())
	if b.Interfaces == nil || len(b.Interfaces) != 0 {
		t.Errorf("interfaces %v, want empty array", b.Interfaces)
	}
}

func TestValidMethod(t *testing.T) {
	for _, m := range Methods {
		if !ValidMethod(m) {
			t.Errorf("%q refused", m)
		}
	}
	for _, m := range []string{"", "AUTO", "npcap"} {
		if ValidMethod(m) {
			t.Errorf("%q accepted", m)
		}
	}
}
