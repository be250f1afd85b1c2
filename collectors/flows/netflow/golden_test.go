package netflow

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden decodes in testdata/flows/netflow")

// goldenFlow is a flow in the spec's flow row names (spec 2.11).
type goldenFlow struct {
	TS      int64  `json:"ts"`
	Device  string `json:"device"`
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	SrcPort uint16 `json:"src_port"`
	DstPort uint16 `json:"dst_port"`
	Proto   uint8  `json:"proto"`
	Packets uint64 `json:"packets"`
	Octets  uint64 `json:"octets"`
}

// TestGolden pins the decode of each softflowd export: the Result of
// every datagram and every flow, one per line so a diff stays readable.
// Regenerate with -update after a deliberate change.
func TestGolden(t *testing.T) {
	for _, e := range exports {
		t.Run(e.name, func(t *testing.T) {
			fs, rs := decodeExport(t, NewDecoder(DefaultConfig()), readDatagrams(t, e.name))
			var b strings.Builder
			b.WriteString("{\"results\": [\n")
			for i, r := range rs {
				line, _ := json.Marshal(r)
				b.Write(line)
				if i < len(rs)-1 {
					b.WriteString(",")
				}
				b.WriteString("\n")
			}
			b.WriteString("],\n\"flows\": [\n")
			for i, f := range fs {
				line, _ := json.Marshal(goldenFlow{f.TS, f.Exporter.String(), f.Src.String(), f.Dst.String(),
					f.SrcPort, f.DstPort, f.Proto, f.Packets, f.Octets})
				b.Write(line)
				if i < len(fs)-1 {
					b.WriteString(",")
				}
				b.WriteString("\n")
			}
			b.WriteString("]}\n")
			got := []byte(b.String())
			if !json.Valid(got) {
				t.Fatal("golden is not valid JSON")
			}
			path := filepath.Join(fixtureDir, strings.TrimSuffix(e.name, ".pcap")+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (-got, +want):\n%s", path, cmp.Diff(string(got), string(want)))
			}
		})
	}
}
