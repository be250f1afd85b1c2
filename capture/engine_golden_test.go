package capture

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/capture from the engine's output")

const goldenDir = "../testdata/golden/capture"

// fakeEnricher knows a few public addresses, as collectors/geo would.
type fakeEnricher map[netip.Addr][2]string

func (f fakeEnricher) Lookup(a netip.Addr) (string, string, bool) {
	v, ok := f[a]
	return v[0], v[1], ok
}

var testEnricher = fakeEnricher{
	netip.MustParseAddr("93.184.216.34"):   {"US", "AS15133"},
	netip.MustParseAddr("2606:4700::1111"): {"US", "AS13335"},
	netip.MustParseAddr("8.8.8.8"):         {"US", "AS15169"},
}

// newTestEngine is an engine with the fixtures' own addresses and a clock
// stopped at fixtureBase (before every packet, so the packets' own times
// decide the current second).
func newTestEngine() *Engine {
	return NewEngine(EngineConfig{LocalNets: testLocalNets, Now: func() time.Time { return fixtureBase }}, testEnricher)
}

// replayFile replays a testdata/pcap file into a fresh test engine.
func replayFile(t testing.TB, name string) (*Engine, int64) {
	t.Helper()
	src, err := OpenFile(filepath.Join(pcapDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	e := newTestEngine()
	n, err := Replay(src, e)
	if err != nil {
		t.Fatal(err)
	}
	return e, n
}

func TestGoldenSnapshots(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			e, _ := replayFile(t, fx.name)
			got, err := json.MarshalIndent(e.Snapshot(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join(goldenDir, fx.name+".json")
			if *update {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("snapshot of %s differs from %s (run with -update if intended):\n%s", fx.name, path, got)
			}
		})
	}
}
