package hub

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"netmon/app/config"
	"netmon/store"
)

// needRoot skips a capture test when not root (it needs CAP_NET_RAW);
// under CI=true, which runs as root, a missing privilege is a failure.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("capture tests need root in CI")
		}
		t.Skip("capture needs root or CAP_NET_RAW")
	}
}

type snapshot struct {
	Running      bool             `json:"running"`
	Device       string           `json:"device"`
	Error        string           `json:"error"`
	TotalPackets int64            `json:"total_packets"`
	Protocols    map[string]int64 `json:"protocols"`
	TopPorts     []struct {
		Port    int    `json:"port"`
		Name    string `json:"name"`
		Bytes   int64  `json:"bytes"`
		Packets int64  `json:"packets"`
	} `json:"top_ports"`
	History []struct {
		TS, In, Out, Local, Packets int64
	} `json:"history"`
}

func TestCaptureControlErrors(t *testing.T) {
	h := startTestHub(t, storetestSQLite(t), nil)
	c := h.client(t)
	if r := c.call("POST", "/api/capture/start", map[string]string{"device": "nmnope0"}).must(t, 200); r.body != `{"ok":false,"error":"no such interface: nmnope0"}` {
		t.Errorf("unknown interface: %s", r.body)
	}
	if r := c.call("POST", "/api/capture/start", map[string]string{"device": ""}).must(t, 200); r.body != `{"ok":false,"error":"device is required"}` {
		t.Errorf("empty device: %s", r.body)
	}
	r := c.call("POST", "/api/record/start", nil)
	if r.code != 409 || r.body != `{"error":"capture is not running: start the capture first, then the recording"}` {
		t.Errorf("record while capture off: %d %s", r.code, r.body)
	}
	c.call("POST", "/api/record/stop", nil).must(t, 409)
	c.call("POST", "/api/capture/stop", nil).must(t, 200)
	var s snapshot
	st := c.call("GET", "/api/status", nil).must(t, 200)
	st.decode(t, &s)
	// spec 2.1 lists error: present (empty) even when capture has none.
	if !strings.Contains(st.body, `"error":""`) {
		t.Errorf("status without its error field: %.200s", st.body)
	}
	if s.Running || s.TopPorts == nil || s.History == nil || s.Protocols == nil {
		t.Errorf("idle snapshot %+v", s)
	}
	if r := c.call("GET", "/api/record/files", nil).must(t, 200); r.body != "[]" {
		t.Errorf("files %s", r.body)
	}
	if r := c.call("GET", "/api/record/status", nil).must(t, 200); r.body != `{"recording":false,"file":"","packets":0,"bytes":0,"error":""}` {
		t.Errorf("record status %s", r.body)
	}

	off := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) { c.Capture.Enabled = false })
	oc := off.client(t)
	if r := oc.call("POST", "/api/capture/start", map[string]string{"device": "lo"}).must(t, 200); r.body != `{"ok":false,"error":"hub-local capture is disabled on this hub (-capture=false)"}` {
		t.Errorf("disabled: %s", r.body)
	}
	oc.call("GET", "/api/status", nil).must(t, 200).decode(t, &s)
	if s.Error != "hub-local capture is disabled on this hub (-capture=false)" {
		t.Errorf("disabled status error %q", s.Error)
	}
}

// TestCaptureOnLoopback captures on lo through the API: exact counts for a
// port only this test uses, a recording read back by tcpdump, downloads
// and their path safety, and the audit of capture and recording control.
func TestCaptureOnLoopback(t *testing.T) {
	needRoot(t)
	h := startTestHub(t, storetestSQLite(t), withPassword("bootstrap-secret-1"))
	c := h.client(t)
	c.login("", "bootstrap-secret-1")
	c.call("POST", "/api/capture/start", map[string]string{"device": "lo"}).must(t, 200)
	if r := c.call("POST", "/api/capture/start", map[string]string{"device": "lo"}); !strings.Contains(r.body, "already running on lo") {
		t.Errorf("second start: %s", r.body)
	}

	// A UDP sink on a free port; 200 datagrams of 100 bytes each.
	sink, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	port := sink.LocalAddr().(*net.UDPAddr).Port
	// The engine files each datagram under one of its two ports (which one
	// is its rule to pick); the test counts both.
	ours := map[int]bool{port: true}
	send := func(n int) {
		conn, err := net.Dial("udp4", sink.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ours[conn.LocalAddr().(*net.UDPAddr).Port] = true
		payload := make([]byte, 100)
		for range n {
			if _, err := conn.Write(payload); err != nil {
				t.Fatal(err)
			}
		}
	}
	// ourCount is what the snapshot counts on our ports.
	ourCount := func() (packets, bytes int64, s snapshot) {
		c.call("GET", "/api/status", nil).must(t, 200).decode(t, &s)
		for _, p := range s.TopPorts {
			if ours[p.Port] {
				packets += p.Packets
				bytes += p.Bytes
			}
		}
		return packets, bytes, s
	}
	waitFor := func(want int64) snapshot {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			got, bytes, s := ourCount()
			if got == want {
				// Frame = 14 Ethernet + 20 IPv4 + 8 UDP + 100 payload = 142 bytes.
				if bytes != want*142 {
					t.Fatalf("our ports: %d bytes, want %d", bytes, want*142)
				}
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("our ports: %d packets, want %d (each frame once on lo); %+v", got, want, s.TopPorts)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// probe sends one datagram between two ports not ours until the
	// engine counts a frame beyond after: frames are read in order, so
	// then every frame before the probe was processed and recorded (the
	// read loop counts a frame, then records it).
	probeSink, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer probeSink.Close()
	probe := func(after int64) {
		t.Helper()
		conn, err := net.Dial("udp4", probeSink.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		deadline := time.Now().Add(5 * time.Second)
		for {
			if _, err := conn.Write([]byte("probe")); err != nil {
				t.Fatal(err)
			}
			var s snapshot
			c.call("GET", "/api/status", nil).must(t, 200).decode(t, &s)
			if s.TotalPackets > after {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the capture counted no frame after %d within 5 s", after)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	probe(0) // the ring is ready: a frame sent now is seen
	send(200)
	waitFor(200) // processed before the recording starts

	r := c.call("POST", "/api/record/start", nil).must(t, 200)
	var started struct {
		OK   bool   `json:"ok"`
		File string `json:"file"`
	}
	r.decode(t, &started)
	if !started.OK || !strings.HasSuffix(started.File, "_lo.pcap") {
		t.Fatalf("record start %s", r.body)
	}
	send(50)
	s := waitFor(250)
	probe(s.TotalPackets) // our last datagram is in the file
	var stopped struct {
		OK      bool   `json:"ok"`
		File    string `json:"file"`
		Packets int64  `json:"packets"`
		Bytes   int64  `json:"bytes"`
	}
	c.call("POST", "/api/record/stop", nil).must(t, 200).decode(t, &stopped)
	if !stopped.OK || stopped.File != started.File || stopped.Packets < 50 {
		t.Fatalf("record stop %+v", stopped)
	}

	if !s.Running || s.Device != "lo" || s.Protocols["UDP"] < 250 || s.TotalPackets < 250 {
		t.Errorf("snapshot running=%v device=%q udp=%d total=%d", s.Running, s.Device, s.Protocols["UDP"], s.TotalPackets)
	}

	// Download and read back with tcpdump: our 50 datagrams are in it.
	dl := c.call("GET", "/api/record/download?file="+started.File, nil).must(t, 200)
	if cd := dl.header.Get("Content-Disposition"); cd != `attachment; filename=`+started.File {
		t.Errorf("Content-Disposition %q", cd)
	}
	// The download is the file, byte for byte.
	onDisk, err := os.ReadFile(filepath.Join(h.cfg.Record.Dir, started.File))
	if err != nil || dl.body != string(onDisk) {
		t.Errorf("downloaded %d bytes, the file has %d (%v)", len(dl.body), len(onDisk), err)
	}
	// The stop answer counts the file's bytes, headers included.
	if int64(len(onDisk)) != stopped.Bytes {
		t.Errorf("the recording reported %d bytes, its file has %d", stopped.Bytes, len(onDisk))
	}
	if tcpdump, err := exec.LookPath("tcpdump"); err == nil {
		file := filepath.Join(h.cfg.Record.Dir, started.File)
		out, err := exec.Command(tcpdump, "-r", file, "-n", "-q", "udp and dst port "+strconv.Itoa(port)).Output()
		if err != nil {
			t.Fatalf("tcpdump: %v", err)
		}
		if n := strings.Count(string(out), "\n"); n != 50 {
			t.Errorf("tcpdump reads %d of our datagrams in the recording, want 50", n)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("tcpdump must be installed in CI")
	}
	for file, code := range map[string]int{
		"../netmon.db": 400, "..%2fx.pcap": 400, "%2e%2e%2fx.pcap": 400, "/etc/passwd": 400, "x.txt": 400,
		"nothere.pcap": 404, "": 400, "sub/x.pcap": 400,
	} {
		q := "/api/record/download?file=" + urlEscape(file)
		if r := c.call("GET", q, nil); r.code != code {
			t.Errorf("download %q: %d %s, want %d", file, r.code, r.body, code)
		}
	}
	var files []struct {
		Name  string `json:"name"`
		Bytes int64  `json:"bytes"`
	}
	c.call("GET", "/api/record/files", nil).must(t, 200).decode(t, &files)
	if len(files) != 1 || files[0].Name != started.File {
		t.Errorf("files %+v", files)
	}

	c.call("POST", "/api/capture/stop", nil).must(t, 200)
	c.call("GET", "/api/status", nil).must(t, 200).decode(t, &s)
	if s.Running {
		t.Error("still running after stop")
	}
	// Counters reset at every start.
	c.call("POST", "/api/capture/start", map[string]string{"device": "lo"}).must(t, 200)
	c.call("GET", "/api/status", nil).must(t, 200).decode(t, &s)
	for _, p := range s.TopPorts {
		if ours[p.Port] {
			t.Errorf("port %d still counted after a restart", p.Port)
		}
	}
	var events []struct{ Action, Target, Result string }
	c.call("GET", "/api/v1/audit?action=*", nil)
	c.call("GET", "/api/v1/audit?limit=50", nil).must(t, 200).decode(t, &events)
	var actions []string
	for i := len(events) - 1; i >= 0; i-- {
		if strings.HasPrefix(events[i].Action, "capture.") || strings.HasPrefix(events[i].Action, "record.") {
			actions = append(actions, events[i].Action+"/"+events[i].Result)
		}
	}
	want := "capture.start/ok capture.start/error record.start/ok record.stop/ok capture.stop/ok capture.start/ok"
	if strings.Join(actions, " ") != want {
		t.Errorf("audited:\n got %s\nwant %s", strings.Join(actions, " "), want)
	}
}

func urlEscape(s string) string {
	return strings.NewReplacer("%", "%25", "/", "%2F", " ", "%20").Replace(s)
}

func TestWebSocketFeed(t *testing.T) {
	h := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) {
		c.Auth.Password = "bootstrap-secret-1"
		c.Server.PublicURL = "https://netmon.example"
	})
	c := h.client(t)
	tok := c.login("", "bootstrap-secret-1")
	url := "ws" + strings.TrimPrefix(h.base, "http") + "/ws"
	dial := func(cookie, origin string) (*websocket.Conn, int) {
		hdr := http.Header{}
		if cookie != "" {
			hdr.Set("Cookie", "nm_session="+cookie)
		}
		if origin != "" {
			hdr.Set("Origin", origin)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
		if err != nil {
			if resp == nil {
				t.Fatalf("dial: %v", err)
			}
			return nil, resp.StatusCode
		}
		return conn, 101
	}
	if _, code := dial("", ""); code != 401 {
		t.Errorf("no session: %d, want 401 before the upgrade", code)
	}
	if _, code := dial(strings.Repeat("0", 64), ""); code != 401 {
		t.Errorf("unknown session: %d", code)
	}
	if _, code := dial(tok, "https://evil.example"); code != 403 {
		t.Errorf("foreign origin: %d, want 403", code)
	}
	conn, code := dial(tok, "https://netmon.example")
	if code != 101 {
		t.Fatalf("allowed origin: %d", code)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(4 << 20)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, raw, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"type":"tick"`, `"stats":{"running":false`, `"connections":[`, `"alert_events":[]`, `"record":{"recording":false,"packets":0,"bytes":0}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("tick lacks %s: %.300s", want, raw)
		}
	}
	// Logout: the session ends, a new handshake is refused.
	c.call("POST", "/api/logout", nil).must(t, 200)
	if _, code := dial(tok, ""); code != 401 {
		t.Errorf("after logout: %d", code)
	}
}

// TestHostConnsOff: with -host-conns=false the hub reads none of the
// machine's sockets: GET /api/connections is empty while this process
// listens, and the alert rules get no agent 0 (issue 28 item 13b: test
// hubs saw other jobs' connections as alerts).
func TestHostConnsOff(t *testing.T) {
	h := startTestHub(t, storetestSQLite(t), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if r := h.client(t).call("GET", "/api/connections", nil).must(t, 200); r.body != "[]" {
		t.Errorf("connections with -host-conns=false: %.300s", r.body)
	}
	invs, err := h.conns.Inventories(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range invs {
		if len(inv.Conns) > 0 && inv.Conns[0].AgentID == 0 {
			t.Errorf("agent 0 (the hub's own sockets) in the alert inventories: %d connections", len(inv.Conns))
		}
	}
}

func TestConnectionsAndGeo(t *testing.T) {
	storetestEach := []string{storetestSQLite(t)}
	for _, dsn := range storetestEach {
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
		h := startTestHub(t, dsn, func(c *config.HubConfig) { c.Geo.Dir = geoDir; c.Capture.HostConns = true })
		c := h.client(t)
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		defer ln.Close()
		var conns []struct {
			LocalAddr string `json:"local_addr"`
			Status    string `json:"status"`
			PID       int    `json:"pid"`
			Process   string `json:"process"`
			Count     int    `json:"count"`
		}
		c.call("GET", "/api/connections", nil).must(t, 200).decode(t, &conns)
		found := false
		for _, k := range conns {
			if k.LocalAddr == ln.Addr().String() && k.Status == "LISTEN" && k.PID == os.Getpid() && k.Count == 1 {
				found = true
			}
		}
		if !found {
			t.Errorf("own listener not among %d connections", len(conns))
		}

		now := time.Now().Truncate(time.Minute).Unix()
		if err := h.db.AddRemoteMinute(context.Background(), now-120, []store.RemoteBytes{
			{IP: netip.MustParseAddr("8.8.8.8"), Country: "US", Bytes: 1000},
			{IP: netip.MustParseAddr("8.8.4.4"), Country: "US", Bytes: 500},
			{IP: netip.MustParseAddr("81.2.69.1"), Country: "GB", Bytes: 700},
		}); err != nil {
			t.Fatal(err)
		}
		if err := h.db.AddRemoteMinute(context.Background(), now-3*3600, []store.RemoteBytes{{IP: netip.MustParseAddr("81.2.69.2"), Country: "GB", Bytes: 99999}}); err != nil {
			t.Fatal(err)
		}
		r := c.call("GET", "/api/v1/geo?minutes=60", nil).must(t, 200)
		if !strings.HasPrefix(r.body, `[{"country":"US","name":"United States","lat":38,"lon":-97,"bytes":1500,"sessions":2},{"country":"GB","name":"United Kingdom"`) ||
			!strings.Contains(r.body, `"bytes":700,"sessions":1}`) {
			t.Errorf("geo %s", r.body)
		}
		c.call("GET", "/api/v1/geo?minutes=10081", nil).must(t, 400)
		if r := c.call("GET", "/api/v1/geo?minutes=600", nil); !strings.Contains(r.body, `"country":"GB"`) || !strings.Contains(r.body, `"bytes":100699`) {
			t.Errorf("geo 10h %s", r.body)
		}
	}
	// No GeoIP source: empty.
	none := startTestHub(t, storetestSQLite(t), nil)
	if r := none.client(t).call("GET", "/api/v1/geo", nil).must(t, 200); r.body != "[]" {
		t.Errorf("geo without source: %s", r.body)
	}

}
