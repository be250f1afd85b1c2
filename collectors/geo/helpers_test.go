package geo

import (
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// startGeo starts a Geo on cfg with its own registry and stops it when
// the test ends.
func startGeo(t *testing.T, cfg Config) (*Geo, *prometheus.Registry) {
	t.Helper()
	return startGeoWith(t, cfg, Deps{})
}

// startGeoWith is startGeo with deps (its Registerer replaced).
func startGeoWith(t *testing.T, cfg Config, deps Deps) (*Geo, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	deps.Registerer = reg
	g := New(testLogger(t), cfg, deps)
	if err := g.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := g.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return g, reg
}

// copyFixture copies a test database into dir under name, replacing any
// file there by rename, as an operator should.
func copyFixture(t *testing.T, fixture, dir, name string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, fixture))
	if err != nil {
		t.Fatal(err)
	}
	writeByRename(t, filepath.Join(dir, name), data)
}

func writeByRename(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// metricValue reads a counter or gauge of reg; labels are name, value
// pairs.
func metricValue(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				if c := m.GetCounter(); c != nil {
					return c.GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("metric %s%v not found", name, labels)
	return 0
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// eventually polls cond every 10 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }
