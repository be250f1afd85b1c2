package collect

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"netmon/agentmode/wire"
)

func TestAttribution(t *testing.T) {
	tests := []struct {
		desc     string
		method   string
		wantNote string
	}{
		{"auto says deep collection is not in this build", "auto", "not in this build yet (collect.method=auto)"},
		{"forced pcap says the same", "pcap", "collect.method=pcap"},
		{"off says it is disabled", "off", "collect.method=off"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), Config{Method: tt.method})
			m, iface, note := c.Attribution()
			if m != "off" || iface != "" || !strings.Contains(note, tt.wantNote) {
				t.Errorf("got %q %q %q", m, iface, note)
			}
		})
	}
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
	if b.AttrMethod != "off" || b.AttrNote == "" {
		t.Errorf("attr %q %q", b.AttrMethod, b.AttrNote)
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
