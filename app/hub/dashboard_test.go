package hub

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"netmon/agentmode/wire"
	"netmon/app/config"
)

// TestGrafanaDashboard: every metric the shipped dashboard
// (ui/grafana/netmon.json) queries is served by a hub that has seen an
// agent, a NetFlow exporter and syslog; each panel is a well-formed
// time series on the dashboard's Prometheus input. The traffic series are
// labelled by agent, interface and exporter, never by remote address.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "ui", "grafana", "netmon.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Inputs []struct {
			Name string `json:"name"`
		} `json:"__inputs"`
		Panels []struct {
			Title      string `json:"title"`
			Type       string `json:"type"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	if dash.UID == "" || len(dash.Inputs) != 1 || dash.Inputs[0].Name != "DS_PROMETHEUS" || len(dash.Panels) < 5 {
		t.Fatalf("dashboard shape: uid %q, inputs %v, %d panels", dash.UID, dash.Inputs, len(dash.Panels))
	}
	names := map[string]bool{}
	metricName := regexp.MustCompile(`netmon_[a-z0-9_]+`)
	for _, p := range dash.Panels {
		if p.Title == "" || p.Type != "timeseries" || p.Datasource.UID != "${DS_PROMETHEUS}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: type %q, datasource %q, %d targets", p.Title, p.Type, p.Datasource.UID, len(p.Targets))
		}
		for _, tg := range p.Targets {
			for _, n := range metricName.FindAllString(tg.Expr, -1) {
				for _, suf := range []string{"_bucket", "_count", "_sum"} {
					if base, ok := strings.CutSuffix(n, suf); ok && strings.HasSuffix(base, "_seconds") {
						n = base
					}
				}
				names[n] = true
			}
		}
	}

	flowPort, syslogPort := freeUDPPort(t), freeUDPPort(t)
	h, admin := fleetHub(t, storetestSQLite(t), func(c *config.HubConfig) {
		c.Flows.Addr, c.Syslog.Addr = udpAddr(flowPort), udpAddr(syslogPort)
	})
	// An agent with two batches (a rate needs two).
	agent := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "pc-1", MachineID: "m-dash"}))
	now := time.Now().Unix()
	for i, rx := range []uint64{1000, 501000} {
		body := fmt.Sprintf(`{"ts":%d,"seq":%d,"interfaces":[{"name":"eth0","rx_bytes":%d,"tx_bytes":%d,"rx_packets":%d,"tx_packets":%d}],"connections":[]}`,
			now+int64(i*30), i+1, rx, rx/2, rx/100, rx/200)
		telemetry(t, h, agent.AgentToken, body).must(t, 200)
	}
	// NetFlow v5 datagrams from softflowd, and a syslog line.
	sendPcapUDP(t, filepath.Join("..", "..", "testdata", "flows", "netflow", "softflowd-v5.pcap"), flowPort)
	// One datagram of no known version: a rejection to count.
	if fc, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", flowPort)); err == nil {
		_, _ = fc.Write([]byte{0, 42, 0, 0, 0, 0, 0, 0})
		fc.Close()
	}
	c, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", syslogPort))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("<13>Nov 24 10:00:00 host app: dashboard"))
	c.Close()

	var metrics string
	defer func() {
		if t.Failed() {
			var missing []string
			for n := range names {
				if !strings.Contains(metrics, "\n# TYPE "+n+" ") {
					missing = append(missing, n)
				}
			}
			t.Logf("missing: %v", missing)
		}
	}()
	eventually(t, "the dashboard's metrics", func() bool {
		metrics = admin.call("GET", "/metrics", nil).must(t, 200).body
		for n := range names {
			if !strings.Contains(metrics, "\n# TYPE "+n+" ") {
				return false
			}
		}
		return true
	})
	for n := range names {
		if !strings.Contains(metrics, "\n# TYPE "+n+" ") {
			t.Errorf("the dashboard queries %s, which /metrics does not serve", n)
		}
	}
	for _, want := range []string{`netmon_agent_interface_bytes_total{agent="pc-1",direction="rx",interface="eth0"} 500000`, `netmon_flow_exporter_octets_total{exporter="127.0.0.1"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// sendPcapUDP sends the UDP payloads of a pcap to 127.0.0.1:port.
func sendPcapUDP(t *testing.T, file string, port int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sent := 0
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.NoCopy)
		if u, ok := p.TransportLayer().(*layers.UDP); ok && len(u.Payload) > 0 {
			if _, err := conn.Write(u.Payload); err != nil {
				t.Fatal(err)
			}
			sent++
		}
	}
	if sent == 0 {
		t.Fatalf("no UDP payload in %s", file)
	}
}
