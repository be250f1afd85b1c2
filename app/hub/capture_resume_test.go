package hub

import (
	"context"
	"path/filepath"
	"testing"

	"netmon/app/config"
)

// TestCaptureResumesAfterRestart: a capture running when the hub stops
// runs again on the same interface when it starts on the same database
// (issue 28 item 16: it came back stopped, and the console's picker then
// proposed the first interface, the management one); a capture a person
// stopped stays stopped, and an interface that is gone leaves it stopped
// with the reason in /api/status's error.
func TestCaptureResumesAfterRestart(t *testing.T) {
	needRoot(t)
	dsn := storetestSQLite(t)
	// the same database needs the same vault key at every start
	key := filepath.Join(t.TempDir(), "vault.key")
	start := func() *testHub { return startTestHub(t, dsn, func(c *config.HubConfig) { c.Vault.File = key }) }
	status := func(h *testHub) snapshot {
		t.Helper()
		var s snapshot
		h.client(t).call("GET", "/api/status", nil).must(t, 200).decode(t, &s)
		return s
	}
	restart := func(h *testHub) *testHub {
		t.Helper()
		if err := h.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		return start()
	}

	h := start()
	h.client(t).call("POST", "/api/capture/start", map[string]string{"device": "lo"}).must(t, 200)
	if s := status(h); !s.Running || s.Device != "lo" {
		t.Fatalf("before restart: running %v device %q", s.Running, s.Device)
	}
	h = restart(h)
	if s := status(h); !s.Running || s.Device != "lo" || s.Error != "" {
		t.Errorf("after restart: running %v device %q error %q, want running on lo", s.Running, s.Device, s.Error)
	}

	// Stopped by a person: stays stopped.
	h.client(t).call("POST", "/api/capture/stop", nil).must(t, 200)
	h = restart(h)
	if s := status(h); s.Running {
		t.Errorf("a capture stopped by hand resumed on %q", s.Device)
	}

	// The remembered interface is gone: stopped, and the reason said.
	if err := h.db.RememberCaptureDevice(context.Background(), "nmgone0"); err != nil {
		t.Fatal(err)
	}
	h = restart(h)
	if s := status(h); s.Running || s.Device != "nmgone0" || s.Error != "resume on nmgone0: no such interface: nmgone0" {
		t.Errorf("gone interface: running %v device %q error %q", s.Running, s.Device, s.Error)
	}
}
