package hub

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/app/config"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestFlowFilterParams: the filter parameters of the flow and event lists
// and the series reach the store (exact rows), and bad values are a 400
// naming the parameter.
func TestFlowFilterParams(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h := startTestHub(t, dsn, nil)
		ctx := context.Background()
		ip := netip.MustParseAddr
		// Two minutes ago and the minute before: closed minutes.
		m := time.Now().Truncate(time.Minute).Add(-3 * time.Minute).Unix()
		fs := []record.Flow{
			{TS: m + 5, Exporter: ip("192.0.2.1"), Src: ip("10.0.0.1"), Dst: ip("203.0.113.7"), SrcPort: 50000, DstPort: 443, Proto: 6, Packets: 3, Octets: 7500},
			{TS: m + 65, Exporter: ip("192.0.2.1"), Src: ip("10.0.0.1"), Dst: ip("198.51.100.9"), SrcPort: 5353, DstPort: 53, Proto: 17, Packets: 1, Octets: 150},
			{TS: m + 70, Exporter: ip("192.0.2.2"), Src: ip("10.0.0.2"), Dst: ip("203.0.113.7"), SrcPort: 40000, DstPort: 443, Proto: 17, Packets: 2, Octets: 1500},
		}
		if _, err := h.db.WriteFlows(ctx, fs); err != nil {
			t.Fatal(err)
		}
		c := h.client(t)
		type row struct {
			Device, Src, Dst string
			Octets           int64
		}
		flows := func(q string) []row {
			t.Helper()
			var rs []row
			c.call("GET", "/api/v1/flows?minutes=60&limit=100"+q, nil).must(t, 200).decode(t, &rs)
			return rs
		}
		for q, want := range map[string][]row{
			"":                            {{"192.0.2.1", "10.0.0.1", "203.0.113.7", 7500}, {"192.0.2.2", "10.0.0.2", "203.0.113.7", 1500}, {"192.0.2.1", "10.0.0.1", "198.51.100.9", 150}},
			"&port=443":                   {{"192.0.2.1", "10.0.0.1", "203.0.113.7", 7500}, {"192.0.2.2", "10.0.0.2", "203.0.113.7", 1500}},
			"&exporter=192.0.2.2":         {{"192.0.2.2", "10.0.0.2", "203.0.113.7", 1500}},
			"&addr=198.51.100.9":          {{"192.0.2.1", "10.0.0.1", "198.51.100.9", 150}},
			"&proto=17&addr=203.0.113.7":  {{"192.0.2.2", "10.0.0.2", "203.0.113.7", 1500}},
			"&proto=6&exporter=192.0.2.2": {},
			"&addr=%3A%3Affff%3A10.0.0.2": {{"192.0.2.2", "10.0.0.2", "203.0.113.7", 1500}}, // a mapped address is its IPv4 form
		} {
			if want == nil {
				want = []row{}
			}
			if diff := cmp.Diff(flows(q), want); diff != "" {
				t.Errorf("flows%s (-got, +want):\n%s", q, diff)
			}
		}
		var convs []row
		c.call("GET", "/api/v1/flows/conversations?window=1h&by=pair&port=443", nil).must(t, 200).decode(t, &convs)
		if diff := cmp.Diff(convs, []row{{"", "10.0.0.1", "203.0.113.7", 7500}, {"", "10.0.0.2", "203.0.113.7", 1500}}); diff != "" {
			t.Errorf("conversations port=443 (-got, +want):\n%s", diff)
		}
		c.call("GET", "/api/v1/flows/conversations?window=24h&exporter=192.0.2.1&proto=17", nil).must(t, 200).decode(t, &convs)
		if diff := cmp.Diff(convs, []row{{"", "10.0.0.1", "198.51.100.9", 150}}); diff != "" {
			t.Errorf("conversations 24h exporter+proto (-got, +want):\n%s", diff)
		}
		var page struct {
			Events []struct {
				Type   string
				Device string
				Data   map[string]any
			}
		}
		c.call("GET", "/api/v1/events?addr=203.0.113.7&proto=17", nil).must(t, 200).decode(t, &page)
		if len(page.Events) != 1 || page.Events[0].Device != "192.0.2.2" || page.Events[0].Data["octets"] != 1500.0 {
			t.Errorf("events addr+proto: %+v", page.Events)
		}
		c.call("GET", "/api/v1/events?domain=*.example.com", nil).must(t, 200).decode(t, &page)
		if len(page.Events) != 0 {
			t.Errorf("a domain filter keeps no flows: %+v", page.Events)
		}

		var series struct {
			By     string
			Step   int
			Times  []int64
			Series []struct {
				Key           string
				Octets        int64
				BitsPerSecond []float64 `json:"bits_per_second"`
			}
			Other []float64
		}
		c.call("GET", "/api/v1/flows/series?by=port&top=1&minutes=3", nil).must(t, 200).decode(t, &series)
		if series.By != "port" || series.Step != 60 || len(series.Times) != 3 || len(series.Series) != 1 {
			t.Fatalf("series %+v", series)
		}
		// The window ends at the last closed minute: m+120 when the test
		// does not straddle a minute (then m+180, one minute later).
		off := int((series.Times[2] - (m + 120)) / 60)
		wantTimes := []int64{m + int64(off)*60, m + 60 + int64(off)*60, m + 120 + int64(off)*60}
		s := series.Series[0]
		wantBits := []float64{7500 * 8 / 60.0, 1500 * 8 / 60.0, 0}
		wantOther := []float64{0, 150 * 8 / 60.0, 0}
		if off == 1 {
			wantBits = []float64{1500 * 8 / 60.0, 0, 0}
			wantOther = []float64{150 * 8 / 60.0, 0, 0}
		}
		if diff := cmp.Diff([]any{series.Times, s.Key, s.BitsPerSecond, series.Other}, []any{wantTimes, "443", wantBits, wantOther}); diff != "" {
			t.Errorf("series (-got, +want):\n%s", diff)
		}

		for path, want := range map[string]string{
			"/api/v1/flows?exporter=router1":                     `{"error":"query parameter \"exporter\": must be an IP address"}`,
			"/api/v1/flows?addr=10.0.0":                          `{"error":"query parameter \"addr\": must be an IP address"}`,
			"/api/v1/flows?port=0":                               `{"error":"query parameter \"port\": must be an integer between 1 and 65535"}`,
			"/api/v1/flows/conversations?port=65536":             `{"error":"query parameter \"port\": must be an integer between 1 and 65535"}`,
			"/api/v1/flows/conversations?proto=tcp":              `{"error":"query parameter \"proto\": must be an integer between 1 and 255"}`,
			"/api/v1/events?domain=a%20b":                        `{"error":"query parameter \"domain\": must be a host name, optionally after *."}`,
			"/api/v1/events?port=-1":                             `{"error":"query parameter \"port\": must be an integer between 1 and 65535"}`,
			"/api/v1/events?device=192.0.2.1&exporter=192.0.2.2": `{"error":"query parameter \"exporter\": differs from device (they are the same filter)"}`,
			"/api/v1/flows/series?by=vlan":                       `{"error":"query parameter \"by\": must be one of exporter, src, dst, port, proto"}`,
			"/api/v1/flows/series?top=21":                        `{"error":"query parameter \"top\": must be an integer between 1 and 20"}`,
			"/api/v1/flows/series?addr=x":                        `{"error":"query parameter \"addr\": must be an IP address"}`,
		} {
			if got := c.call("GET", path, nil).must(t, 400).body; got != want {
				t.Errorf("%s: %s, want %s", path, got, want)
			}
		}
	})
}

// TestGeoStatus: the hub says whether it has GeoIP databases, from the
// files of its -geoip-dir.
func TestGeoStatus(t *testing.T) {
	dsn := storetestSQLite(t)
	empty := startTestHub(t, dsn, nil)
	if got := empty.client(t).call("GET", "/api/v1/geo/status", nil).must(t, 200).body; got != `{"source":"none","countries":false,"asn":false,"databases":[]}` {
		t.Errorf("no database: %s", got)
	}
	geoDir := t.TempDir()
	for _, f := range []string{"maxmind-country.mmdb", "maxmind-asn.mmdb"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "geoip", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(geoDir, f), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) { c.Geo.Dir = geoDir })
	want := `{"source":"mmdb","countries":true,"asn":true,"databases":[{"name":"maxmind-asn.mmdb","kind":"asn"},{"name":"maxmind-country.mmdb","kind":"country"}]}`
	if got := h.client(t).call("GET", "/api/v1/geo/status", nil).must(t, 200).body; got != want {
		t.Errorf("two databases: %s\nwant %s", got, want)
	}
}

// TestRetimedExporter: an exporter replaying a capture 14 days old over
// the real socket: its flows are stored at their receive time (so the
// 15-minute list shows them), counted on /api/v1/flows/exporters and in
// the metric.
func TestRetimedExporter(t *testing.T) {
	port := freeUDPPort(t)
	h := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) { c.Flows.Addr = udpAddr(port) })
	const uptime = 600_000
	export := time.Now().Add(-14 * 24 * time.Hour)
	b := make([]byte, 24+48*3)
	binary.BigEndian.PutUint16(b[0:], 5)
	binary.BigEndian.PutUint16(b[2:], 3)
	binary.BigEndian.PutUint32(b[4:], uptime)
	binary.BigEndian.PutUint32(b[8:], uint32(export.Unix()))
	for i := range 3 {
		r := b[24+48*i:]
		copy(r[0:4], []byte{10, 9, 0, byte(i + 1)})
		copy(r[4:8], []byte{203, 0, 113, 9})
		binary.BigEndian.PutUint32(r[16:], 2)
		binary.BigEndian.PutUint32(r[20:], 500)
		binary.BigEndian.PutUint32(r[24:], uptime-2000)
		binary.BigEndian.PutUint32(r[28:], uptime-1000)
		r[38] = 17
	}
	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before := time.Now().Unix()
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
	c := h.client(t)
	var ex []struct {
		Exporter      string
		Flows         int64
		LastSeen      int64 `json:"last_seen"`
		Retimed       int64
		OffsetSeconds int64 `json:"offset_seconds"`
		RetimedAt     int64 `json:"retimed_at"`
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.call("GET", "/api/v1/flows/exporters", nil).must(t, 200).decode(t, &ex)
		if len(ex) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := time.Now().Unix()
	if len(ex) != 1 || ex[0].Exporter != "127.0.0.1" || ex[0].Flows != 3 || ex[0].Retimed != 3 || ex[0].RetimedAt < before || ex[0].RetimedAt > after || ex[0].LastSeen != ex[0].RetimedAt {
		t.Fatalf("exporters %+v", ex)
	}
	// The offset is the receive time less the record's (the export time
	// less one second), so 14 days and a second, to the receive second.
	if want := ex[0].RetimedAt - (export.Unix() - 1); ex[0].OffsetSeconds != want {
		t.Errorf("offset %d, want %d", ex[0].OffsetSeconds, want)
	}
	var rows []struct{ Octets int64 }
	for deadline := time.Now().Add(5 * time.Second); len(rows) < 3 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond) // the collector hands its batch over within 100 ms
		h.queue.Flush()
		c.call("GET", "/api/v1/flows?minutes=15&proto=17", nil).must(t, 200).decode(t, &rows)
	}
	if len(rows) != 3 || rows[0].Octets != 500 {
		t.Errorf("the retimed flows in the last 15 minutes: %+v", rows)
	}
	if body := c.call("GET", "/metrics", nil).must(t, 200).body; !strings.Contains(body, `netmon_flow_records_retimed_total{direction="past"} 3`) {
		t.Error("metric netmon_flow_records_retimed_total{direction=\"past\"} is not 3")
	}
}
