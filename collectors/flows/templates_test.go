package flows

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/collectors/flows/netflow"
	"netmon/store/record"
)

// TestTemplatesRoundTrip: templates survive their stored form (an IPFIX
// enterprise field keeps its top bit), and a row this version cannot read
// is skipped rather than failing the load.
func TestTemplatesRoundTrip(t *testing.T) {
	in := []netflow.Template{
		{Exporter: netip.MustParseAddr("192.0.2.1"), Domain: 7, ID: 256, Version: 9, Fields: []netflow.Field{{Type: 8, Length: 4}, {Type: 12, Length: 4}}},
		{Exporter: netip.MustParseAddr("2001:db8::1"), Domain: 1, ID: 300, Version: 10, Options: true, Fields: []netflow.Field{{Type: 0x8000 | 5, Length: 65535}}},
	}
	rows, err := encodeTemplates(in)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Exporter != "192.0.2.1" || rows[1].ID != 300 || rows[1].Version != 10 {
		t.Errorf("rows: %+v", rows)
	}
	rows = append(rows, record.FlowTemplate{Exporter: "not an address", Body: "{}"}, record.FlowTemplate{Exporter: "192.0.2.9", Body: "not json"})
	if diff := cmp.Diff(decodeTemplates(rows), in, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
}
