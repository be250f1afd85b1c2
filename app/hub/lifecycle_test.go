package hub

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/app/config"
)

// TestPartsOrder: parts start in the order added and stop in exactly the
// reverse order; a failed start leaves the later parts unstarted, what
// New opened is stopped though never started, and stop errors are joined.
func TestPartsOrder(t *testing.T) {
	var log []string
	fake := func(name string, startErr, stopErr error) (func() error, func(context.Context) error) {
		return func() error { log = append(log, "start "+name); return startErr },
			func(context.Context) error { log = append(log, "stop "+name); return stopErr }
	}
	tests := []struct {
		desc      string
		failStart string
		wantLog   []string
		wantErrs  []string
	}{
		{
			desc:     "all start, reverse stop, errors joined",
			wantLog:  []string{"start a", "start b", "start c", "stop c", "stop b", "stop a", "stop opened"},
			wantErrs: []string{"stop b: b failed", "stop a: a failed"},
		},
		{
			desc:      "b fails to start: c never starts, a and the opened part stop",
			failStart: "b",
			wantLog:   []string{"start a", "start b", "stop a", "stop opened"},
			wantErrs:  []string{"stop a: a failed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			log = nil
			var p parts
			p.opened("opened", func(context.Context) error { log = append(log, "stop opened"); return nil })
			for _, name := range []string{"a", "b", "c"} {
				var startErr, stopErr error
				if name == tt.failStart {
					startErr = errors.New("no")
				}
				if name != "c" {
					stopErr = errors.New(name + " failed")
				}
				start, stop := fake(name, startErr, stopErr)
				p.add(name, start, stop)
			}
			err := p.startAll()
			if (err != nil) != (tt.failStart != "") {
				t.Fatalf("startAll: %v", err)
			}
			stopErr := p.stopAll(context.Background())
			if diff := cmp.Diff(log, tt.wantLog); diff != "" {
				t.Errorf("order (-got, +want):\n%s", diff)
			}
			for _, w := range tt.wantErrs {
				if stopErr == nil || !strings.Contains(stopErr.Error(), w) {
					t.Errorf("stop error %v lacks %q", stopErr, w)
				}
			}
			if again := p.stopAll(context.Background()); again != nil || len(log) != len(tt.wantLog) {
				t.Errorf("a second stopAll stopped again: %v %v", again, log)
			}
		})
	}
}

// TestHubStopsInReverse: the real hub starts its components in dependency
// order and stops them in exactly the reverse order, HTTP first and the
// database last.
func TestHubStopsInReverse(t *testing.T) {
	cfg := config.DefaultHubConfig()
	dir := t.TempDir()
	cfg.Store.DSN, cfg.Server.Port = filepath.Join(dir, "netmon.db"), 0
	cfg.Vault.File = filepath.Join(dir, "vault.key")
	cfg.Record.Dir, cfg.Geo.Dir, cfg.Geo.Online = dir, dir, false
	h, err := newStarted(discardLog(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	var started, stopped []string
	for _, e := range h.parts.trace {
		if name, ok := strings.CutPrefix(e, "start "); ok {
			started = append(started, name)
		} else {
			stopped = append(stopped, strings.TrimPrefix(e, "stop "))
		}
	}
	// Each after what it reads: the device component before the alert
	// engine (interface rates, firewall states), the alert engine before
	// the compliance log (time_drift), the live feed after the alert
	// engine (its events); the SLA targets (they raise through the alert
	// engine) and the reports (they mail through the notifier) after both,
	// the reports' rollup job just before the reports.
	wantStarted := []string{"leader", "retention", "auth", "geo", "capture", "ioc-list", "domain-categories", "queue", "compliance", "flows", "syslog", "fleet", "devices", "notify", "alerts", "topology", "incidents", "ai", "ai_triage", "ai_nightly", "sla", "report_rollup", "reports", "live", "http"}
	if diff := cmp.Diff(started, wantStarted); diff != "" {
		t.Errorf("start order (-got, +want):\n%s", diff)
	}
	wantStopped := slices.Concat([]string{"listener", "store"}, wantStarted)
	slices.Reverse(wantStopped)
	if diff := cmp.Diff(stopped, wantStopped); diff != "" {
		t.Errorf("stop order (-got, +want):\n%s", diff)
	}
}
