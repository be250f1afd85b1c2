package hub

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/app/procview"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// deepBatch is a telemetry batch with deep collection sections, as an
// agent sends it (the sections are additive fields of protocol 1).
func deepBatch(seq uint64, ts int64, curlIn int, procs ...map[string]any) map[string]any {
	return map[string]any{"ts": ts, "seq": seq, "attr_method": "pcap", "attr_iface": "eth0",
		"interfaces": []wire.Interface{{Name: "eth0", RxBytes: 1000 * seq, TxBytes: 1000 * seq}},
		"connections": []wire.Connection{
			{Proto: "tcp", LocalAddr: "10.0.0.5:40000", RemoteAddr: "192.0.2.1:443", Status: "ESTABLISHED", PID: 10, Process: "curl"},
			{Proto: "tcp", LocalAddr: "10.0.0.5:40001", RemoteAddr: "192.0.2.1:443", Status: "ESTABLISHED", PID: 10, Process: "curl"},
			{Proto: "tcp", LocalAddr: "0.0.0.0:22", RemoteAddr: "0.0.0.0:0", Status: "LISTEN", PID: 1, Process: "sshd"},
		},
		"processes": append([]map[string]any{
			{"process": "curl", "pid": 10, "bytes_in": curlIn, "bytes_out": 10, "packets_in": 2, "packets_out": 1,
				"remotes": []map[string]any{{"proto": "tcp", "ip": "192.0.2.1", "port": 443, "bytes_in": curlIn, "bytes_out": 10}}},
			{"process": "(unattributed)", "pid": 0, "bytes_in": 4, "bytes_out": 0,
				"reasons": []map[string]any{{"reason": "socket not found", "bytes": 3, "packets": 1}, {"reason": "kernel socket", "bytes": 1, "packets": 1}}},
		}, procs...),
		"l7": []map[string]any{
			{"host": "example.com", "kind": "tls", "process": "curl", "bytes": 500, "hits": 1},
			{"host": "<img src=x onerror=alert(1)>", "kind": "http", "process": "curl", "bytes": 7, "hits": 1},
		},
		"dns": []map[string]any{{"domain": "example.com", "process": "curl", "queries": 1, "responses": 1}},
	}
}

// TestDeepRoutes: the deep collection sections of telemetry reach the
// process, L7, DNS, process detail and events routes with exact sums; a
// replayed batch counts once; a site-bound caller sees only its site's
// agents; hostile names come back as JSON text.
func TestDeepRoutes(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		_, tokA := createEnrollToken(t, admin, map[string]any{"name": "a", "site": "a", "max_uses": 0})
		_, tokB := createEnrollToken(t, admin, map[string]any{"name": "b", "site": "b", "max_uses": 0})
		a := enrolled(t, hello(t, h, tokA, wire.Hello{Name: "web-a", MachineID: "m-a"}))
		b := enrolled(t, hello(t, h, tokB, wire.Hello{Name: "web-b", MachineID: "m-b"}))
		now := time.Now().Unix()
		now -= now % 60
		// A hostile process name with an invalid UTF-8 byte, sent raw.
		raw, err := json.Marshal(deepBatch(1, now, 100, map[string]any{"process": "evil\"<script>HOSTILE", "pid": 66, "bytes_in": 1, "bytes_out": 1}))
		if err != nil {
			t.Fatal(err)
		}
		first := strings.Replace(string(raw), "HOSTILE", "\xff", 1)
		telemetry(t, h, a.AgentToken, first).must(t, 200)
		telemetry(t, h, a.AgentToken, first).must(t, 200) // a retry: counted once
		telemetry(t, h, a.AgentToken, deepBatch(2, now+1, 200)).must(t, 200)
		telemetry(t, h, b.AgentToken, deepBatch(1, now, 1000)).must(t, 200)
		telemetry(t, h, b.AgentToken, map[string]any{"ts": now, "seq": 2, "interfaces": []any{}, "connections": []any{}}).must(t, 200) // no sections
		eventually(t, "the deep batches stored", func() bool {
			r := admin.call("GET", "/api/v1/dns", nil)
			return r.code == 200 && strings.Contains(r.body, `"queries":3`)
		})
		h.client(t).call("GET", "/api/v1/processes", nil).must(t, 401)

		admin.createUser("bob", "bob-password-1", "viewer", "b")
		bob := h.client(t)
		bob.login("bob", "bob-password-1")
		for _, tc := range []struct {
			name   string
			caller *client
			path   string
			code   int
			body   string
		}{
			{"fleet-wide processes", admin, "/api/v1/processes", 200,
				`[{"process":"curl","bytes_in":1300,"bytes_out":30,"total":1330,"agent_count":2},` +
					`{"process":"(unattributed)","bytes_in":12,"bytes_out":0,"total":12,"agent_count":2},` +
					`{"process":"evil\"\u003cscript\u003e` + "\ufffd" + `","bytes_in":1,"bytes_out":1,"total":2,"agent_count":1}]`},
			{"one agent, limit 1", admin, fmt.Sprintf("/api/v1/processes?agent_id=%d&limit=1", a.AgentID), 200,
				`[{"process":"curl","bytes_in":300,"bytes_out":20,"total":320,"agent_count":1}]`},
			{"site b sees its agent only", bob, "/api/v1/processes?limit=1", 200,
				`[{"process":"curl","bytes_in":1000,"bytes_out":10,"total":1010,"agent_count":1}]`},
			{"site b asking for site a's agent", bob, fmt.Sprintf("/api/v1/processes?agent_id=%d", a.AgentID), 200, `[]`},
			{"l7", admin, "/api/v1/l7", 200,
				`[{"host":"example.com","kind":"tls","process":"curl","bytes":1500,"hits":3,"agent_count":2},` +
					`{"host":"\u003cimg src=x onerror=alert(1)\u003e","kind":"http","process":"curl","bytes":21,"hits":3,"agent_count":2}]`},
			{"dns", admin, "/api/v1/dns?minutes=5", 200, `[{"domain":"example.com","process":"curl","queries":3,"responses":3,"agent_count":2}]`},
			{"dns of site b", bob, "/api/v1/dns", 200, `[{"domain":"example.com","process":"curl","queries":1,"responses":1,"agent_count":1}]`},
			{"limit out of range", admin, "/api/v1/l7?limit=0", 400, ""},
			{"another site's process detail", bob, fmt.Sprintf("/api/v1/agents/%d/processes/curl", a.AgentID), 404, ""},
			{"unknown process", admin, fmt.Sprintf("/api/v1/agents/%d/processes/nope", a.AgentID), 404, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := tc.caller.call("GET", tc.path, nil).must(t, tc.code)
				if tc.body != "" && r.body != tc.body {
					t.Errorf("body\n got %s\nwant %s", r.body, tc.body)
				}
			})
		}

		// Alert events: one about curl on agent a (related), one about curl
		// on agent b and one about another process of a (not related).
		related, err := h.db.InsertAlertEvent(t.Context(), record.AlertEvent{TS: now, Kind: "port", Key: fmt.Sprintf("%d|192.0.2.1:4444", a.AgentID),
			Message: "curl connected to suspicious port", Severity: 9, State: "firing", Count: 1, AgentID: a.AgentID, LastTS: now, Process: "curl"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []record.AlertEvent{
			{TS: now, Kind: "port", Key: fmt.Sprintf("%d|192.0.2.1:4444", b.AgentID), Severity: 9, State: "firing", Count: 1, AgentID: b.AgentID, LastTS: now, Process: "curl"},
			{TS: now, Kind: "proc", Key: fmt.Sprintf("%d|nc", a.AgentID), Severity: 4, State: "firing", Count: 1, AgentID: a.AgentID, LastTS: now, Process: "nc"},
		} {
			if _, err := h.db.InsertAlertEvent(t.Context(), e); err != nil {
				t.Fatal(err)
			}
		}
		var d procview.Detail
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d/processes/curl?minutes=60", a.AgentID), nil).must(t, 200).decode(t, &d)
		conn := wire.Connection{Proto: "tcp", LocalAddr: "10.0.0.5:40000", RemoteAddr: "192.0.2.1:443", Status: "ESTABLISHED", PID: 10, Process: "curl"}
		conn2 := conn
		conn2.LocalAddr = "10.0.0.5:40001"
		want := procview.Detail{AgentID: a.AgentID, Process: "curl", Minutes: 60,
			Summary: procview.Summary{FirstSeen: now, LastSeen: now, PIDs: []int32{10}, BytesIn: 300, BytesOut: 20, Total: 320, LastRate: 320.0 / 60},
			Reasons: []procview.Reason{},
			Destinations: []procview.Destination{{ProcessDestination: store.ProcessDestination{RemoteIP: "192.0.2.1", RemotePort: 443, Proto: "tcp",
				BytesIn: 300, BytesOut: 20, FirstSeen: now, LastSeen: now}}},
			Connections: []wire.Connection{conn, conn2},
			Names: []procview.Name{
				{Kind: "dns", Name: "example.com", Count: 2, Answers: 2, FirstSeen: now, LastSeen: now},
				{Kind: "tls", Name: "example.com", Count: 2, Bytes: 1000, FirstSeen: now, LastSeen: now},
				{Kind: "http", Name: "<img src=x onerror=alert(1)>", Count: 2, Bytes: 14, FirstSeen: now, LastSeen: now},
			},
			Buckets: []procview.Bucket{{TS: now, BytesIn: 300, BytesOut: 20}},
			Timeline: procview.Timeline{FirstSeen: now, FirstDNS: now, FirstL7: now, Spikes: []procview.Spike{},
				Alerts: []procview.RelatedAlert{{ID: related.ID, TS: now, Kind: "port", Severity: 9, State: "firing", Message: "curl connected to suspicious port"}}},
		}
		if diff := cmp.Diff(d, want); diff != "" {
			t.Errorf("process detail (-got, +want):\n%s", diff)
		}
		var u procview.Detail
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d/processes/%s", a.AgentID, url.PathEscape("(unattributed)")), nil).must(t, 200).decode(t, &u)
		if diff := cmp.Diff(u.Reasons, []procview.Reason{{Reason: "socket not found", Bytes: 6, Packets: 2}, {Reason: "kernel socket", Bytes: 2, Packets: 2}}); diff != "" {
			t.Errorf("unattributed reasons (-got, +want):\n%s", diff)
		}

		var page struct {
			Events []store.Event `json:"events"`
		}
		admin.call("GET", fmt.Sprintf("/api/v1/events?agent_id=%d", a.AgentID), nil).must(t, 200).decode(t, &page)
		var types []string
		for _, e := range page.Events {
			types = append(types, e.Type)
		}
		wantTypes := []string{"connection.seen", "dns.query", "http.host_observed", "tls.sni_observed"}
		if diff := cmp.Diff(types, wantTypes); diff != "" {
			t.Errorf("event types of agent a (-got, +want):\n%s", diff)
		}
		bob.call("GET", fmt.Sprintf("/api/v1/events?agent_id=%d", a.AgentID), nil).must(t, 200).decode(t, &page)
		if len(page.Events) != 0 {
			t.Errorf("site b sees site a's events: %+v", page.Events)
		}

		// A process name with slashes (kernel threads, a path as
		// argv[0]) is one URL-escaped path segment of the detail route.
		telemetry(t, h, a.AgentToken, map[string]any{"ts": now, "seq": 3, "interfaces": []any{}, "connections": []any{},
			"processes": []map[string]any{{"process": "kworker/u8:2/x y", "pid": 77, "bytes_in": 5, "bytes_out": 6}}}).must(t, 200)
		path := fmt.Sprintf("/api/v1/agents/%d/processes/%s?minutes=60", a.AgentID, url.PathEscape("kworker/u8:2/x y"))
		eventually(t, "the slash process stored", func() bool { return admin.call("GET", path, nil).code == 200 })
		var k procview.Detail
		admin.call("GET", path, nil).must(t, 200).decode(t, &k)
		if k.Process != "kworker/u8:2/x y" || k.Summary.BytesIn != 5 || k.Summary.BytesOut != 6 || len(k.Summary.PIDs) != 1 || k.Summary.PIDs[0] != 77 {
			t.Errorf("slash process detail %+v", k)
		}
		// Unescaped, the slashes are path separators: no such route.
		admin.call("GET", fmt.Sprintf("/api/v1/agents/%d/processes/kworker/u8:2", a.AgentID), nil).must(t, 404)
	})
}

// TestDeepPolicyAndLimits: with -agent-pcap=false the hub keeps no deep
// collection even from an agent that still sends it, and a batch beyond
// the row limits is refused whole (413) and stores nothing.
func TestDeepPolicyAndLimits(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) { c.Fleet.PcapEnabled = false })
		a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "x", MachineID: "m-x"}))
		if a.PcapEnabled {
			t.Fatal("hello says pcap_enabled with -agent-pcap=false")
		}
		now := time.Now().Unix()
		big := deepBatch(1, now, 1)
		var many []map[string]any
		for i := range 5001 {
			many = append(many, map[string]any{"domain": fmt.Sprintf("d%d.example", i), "process": "p", "queries": 1})
		}
		big["dns"] = many
		telemetry(t, h, a.AgentToken, big).must(t, 413)
		if r := telemetry(t, h, a.AgentToken, deepBatch(2, now, 1)).must(t, 200); r.body != `{"ok":true,"interval":30,"pcap_enabled":false}` {
			t.Errorf("telemetry answer %s, want the policy in it", r.body)
		}
		eventually(t, "the batch stored", func() bool {
			var ag struct {
				Agent struct {
					Conns int `json:"conns"`
				} `json:"agent"`
			}
			admin.call("GET", fmt.Sprintf("/api/v1/agents/%d", a.AgentID), nil).must(t, 200).decode(t, &ag)
			return ag.Agent.Conns == 3
		})
		time.Sleep(1500 * time.Millisecond) // one more queue flush
		for _, path := range []string{"/api/v1/processes", "/api/v1/l7", "/api/v1/dns"} {
			if r := admin.call("GET", path, nil).must(t, 200); r.body != "[]" {
				t.Errorf("%s with -agent-pcap=false: %s", path, r.body)
			}
		}
	})
}
