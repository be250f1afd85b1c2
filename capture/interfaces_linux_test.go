package capture

import (
	"log/slog"
	"testing"
)

// TestInterfacesListsLoopback: the component lists the host's interfaces
// (GET /api/interfaces asks it, not capture/source), loopback included.
func TestInterfacesListsLoopback(t *testing.T) {
	c := New(slog.New(slog.DiscardHandler), DefaultConfig(), Deps{})
	ifs, err := c.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Name == "lo" {
			return
		}
	}
	t.Fatalf("no lo among %+v", ifs)
}
