package hub

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"netmon/store/record"
)

// rlServer listens on one port in the test's namespace; each client
// names a byte count on its first line, receives that many bytes, and the
// connection stays open until the client goes (an ESTABLISHED row in the
// agent's inventory for as long as the test needs).
const rlServer = `import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(16)
def serve(c):
    n = int(c.makefile().readline())
    blk = b"t" * 65536
    while n > 0:
        k = min(n, len(blk)); c.sendall(blk[:k]); n -= k
    c.recv(1)
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
`

// rlClient renames itself (the process name the agent reports is the
// kernel's comm), connects, asks for a byte count, reads it all, says
// "done" and holds the connection open.
const rlClient = `import socket, sys, time
open("/proc/self/comm", "w").write(sys.argv[1])
c = socket.create_connection((sys.argv[2], int(sys.argv[3])))
n = int(sys.argv[4]); c.sendall(b"%d\n" % n); got = 0
while got < n:
    b = c.recv(1 << 20)
    if not b: break
    got += len(b)
print("done", got, flush=True)
time.sleep(3600)
`

// TestRulesFromRealAgent is issue 18's port, proc and target from real
// processes' connections through `netmon hub` and `netmon agent`
// binaries (root: a namespace, a veth and the hub capture). A Python
// client (comm renamed to a name of this test's own) holds a connection
// to a server in a namespace the test made, on a port listed in the port
// rule, before the agent starts: the agent's first inventory carries it,
// port fires for the agent, and proc stays silent (the first run only
// fills the seen-table). A second client with another name then
// connects and downloads 6 MB: proc fires exactly once with its name,
// and target (whose input is the hub capture's endpoints, here on the
// veth) fires once for the server's address over min_total_mb 5.
// The hub's own inventory (agent 0) sees the same processes, so agent
// events are read with agent=<id>; other processes of the shared host
// may raise their own proc events, so proc is asserted by key.
func TestRulesFromRealAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	needRoot(t)
	for _, tool := range []string{"ip", "/usr/bin/python3"} {
		need(t, tool)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pid := os.Getpid()
	id := strconv.Itoa(pid % 100000)
	ns, vHost, vNS := "hubrlB"+id, "hrlA"+id, "hrlB"+id
	// 100.64.0.0/10 (shared address space) with the PID in the middle
	// octets: the root namespace gets an address no other test uses.
	net3 := fmt.Sprintf("100.%d.%d", 64+(pid/256)%64, pid%256)
	hostIP, srvIP := net3+".1", net3+".2"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ip("link", "add", vHost, "type", "veth", "peer", "name", vNS, "netns", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", vHost).Run() })
	// Host routes, not a shared /24: the hub capture counts addresses on
	// its interface's own networks as local, and target judges remote
	// endpoints only.
	ip("addr", "add", hostIP+"/32", "dev", vHost)
	ip("-n", ns, "addr", "add", srvIP+"/32", "dev", vNS)
	ip("link", "set", vHost, "up")
	ip("-n", ns, "link", "set", vNS, "up")
	ip("-n", ns, "link", "set", "lo", "up")
	ip("route", "add", srvIP+"/32", "dev", vHost, "src", hostIP)
	ip("-n", ns, "route", "add", hostIP+"/32", "dev", vNS)

	for name, body := range map[string]string{"srv.py": rlServer, "cli.py": rlClient} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	svcPort := 20000 + pid%20000
	srv := startCmd(t, dir, nil, "ip", "netns", "exec", ns, "/usr/bin/python3", filepath.Join(dir, "srv.py"), srvIP, strconv.Itoa(svcPort))
	client := func(name string, n int) *process {
		t.Helper()
		p := startCmd(t, dir, nil, "/usr/bin/python3", filepath.Join(dir, "cli.py"), name, srvIP, strconv.Itoa(svcPort), strconv.Itoa(n))
		waitFor(t, 30*time.Second, name+"'s download", func() bool {
			return strings.Contains(p.logs.String(), fmt.Sprintf("done %d", n))
		}, func() string { return "client:\n" + p.logs.String() + "\nserver:\n" + srv.logs.String() })
		return p
	}
	oldName, newName := "nmold"+id, "nmnew"+id

	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	hub := startProc(t, dir, []string{"NETMON_VAULT_KEY_FILE=" + filepath.Join(dir, "vault.key")},
		"hub", "-port", strconv.Itoa(port), "-db", filepath.Join(dir, "netmon.db"), "-enroll-token", testStaticToken,
		"-auth-password", "admin-password-1", "-agent-interval", "1",
		"-geoip-dir", filepath.Join(dir, "geoip"), "-record-dir", filepath.Join(dir, "captures"),
		"-ip-online-lookup=false", "-log-level", "warn")
	waitHTTP(t, base+"/readyz")
	token := adminToken(t, base)
	call := func(method, path, body string, out any) int {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == 200 && out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatalf("%s: %v: %s", path, err, raw)
			}
		}
		if resp.StatusCode != 200 {
			t.Logf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
		return resp.StatusCode
	}
	if code := call("PUT", "/api/alerts", fmt.Sprintf(`{"ports":{"enabled":true,"ports":[%d]},"new_proc":{"enabled":true},"new_target":{"enabled":true,"min_total_mb":5}}`, svcPort), nil); code != 200 {
		t.Fatalf("PUT /api/alerts: %d", code)
	}
	var started struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if code := call("POST", "/api/capture/start", fmt.Sprintf(`{"device":%q}`, vHost), &started); code != 200 || !started.OK {
		t.Fatalf("capture start on %s: %d %+v", vHost, code, started)
	}

	old := client(oldName, 1000)
	agent := startProc(t, dir, nil, "agent", "-hub-url", base, "-hub-token", testStaticToken,
		"-state", filepath.Join(dir, "agent.state.json"), "-name", "rules-e2e", "-log-level", "warn")

	var agents []struct {
		ID     int64 `json:"id"`
		Online bool  `json:"online"`
		Rates  []struct {
			Name      string `json:"name"`
			SpeedMbps int64  `json:"speed_mbps"`
		} `json:"rates"`
	}
	waitFor(t, 30*time.Second, "the agent online", func() bool {
		agents = nil
		return call("GET", "/api/v1/agents", "", &agents) == 200 && len(agents) == 1 && agents[0].Online
	}, func() string { return fmt.Sprintf("agents %+v\nhub:\n%s\nagent:\n%s", agents, hub.logs, agent.logs) })
	aid := agents[0].ID
	events := func(kind string, agentID int64) []record.AlertEvent {
		var page struct {
			Events []record.AlertEvent `json:"events"`
		}
		call("GET", fmt.Sprintf("/api/v1/alerts/events?kind=%s&agent=%d&limit=1000", kind, agentID), "", &page)
		return page.Events
	}
	byKey := func(evs []record.AlertEvent, key string) []record.AlertEvent {
		var out []record.AlertEvent
		for _, e := range evs {
			if e.Key == key {
				out = append(out, e)
			}
		}
		return out
	}
	portKey := fmt.Sprintf("%d|%s:%d", aid, srvIP, svcPort)
	waitFor(t, 30*time.Second, "the agent's port event", func() bool {
		return len(byKey(events("port", aid), portKey)) == 1
	}, func() string { return fmt.Sprintf("hub:\n%s\nagent:\n%s", hub.logs, agent.logs) })

	// The agent's first inventory has been judged: a process that appears
	// now is new to it.
	fresh := client(newName, 6_000_000)
	procKey := fmt.Sprintf("%d|%s", aid, newName)
	waitFor(t, 30*time.Second, "the agent's proc event", func() bool {
		return len(byKey(events("proc", aid), procKey)) == 1
	}, func() string { return fmt.Sprintf("proc events %+v\nagent:\n%s", events("proc", aid), agent.logs) })
	waitFor(t, 30*time.Second, "the target event", func() bool {
		return len(byKey(events("target", 0), srvIP)) == 1
	}, func() string { return fmt.Sprintf("target events %+v\nhub:\n%s", events("target", 0), hub.logs) })
	// Two more inventory cycles (5 s each) must not add a row or a repeat.
	time.Sleep(11 * time.Second)

	procs := events("proc", aid)
	p := byKey(procs, procKey)
	if len(p) != 1 || p[0].Count != 1 || p[0].Severity != 4 || p[0].AgentID != aid || p[0].State != "firing" ||
		p[0].Message != fmt.Sprintf("agent %d: new process %s with network connections", aid, newName) {
		t.Errorf("proc event of %s: %+v", newName, p)
	}
	if o := byKey(procs, fmt.Sprintf("%d|%s", aid, oldName)); len(o) != 0 {
		t.Errorf("%s was in the agent's first inventory, yet proc fired: %+v", oldName, o)
	}
	ports := events("port", aid)
	if len(ports) != 1 || ports[0].Key != portKey || ports[0].Severity != 9 || ports[0].Count < 2 ||
		ports[0].Message != fmt.Sprintf("agent %d: %s connected to suspicious port %d on %s", aid, oldName, svcPort, srvIP) {
		t.Errorf("agent port events (one row, repeated once per batch that showed it): %+v", ports)
	}
	tg := byKey(events("target", 0), srvIP)
	if len(tg) != 1 || tg[0].Count != 1 || !strings.HasPrefix(tg[0].Message, "new target "+srvIP+": ") ||
		!strings.HasSuffix(tg[0].Message, " MB exchanged (threshold 5 MB)") {
		t.Errorf("target event: %+v", tg)
	}
	// The link speed the iface_util rule judges agents' rates against,
	// from the real agent: a veth reports 10000 Mbit/s, loopback none.
	agents = nil
	if code := call("GET", "/api/v1/agents", "", &agents); code != 200 || len(agents) != 1 {
		t.Fatalf("GET /api/v1/agents: %d %+v", code, agents)
	}
	speeds := map[string]int64{}
	for _, r := range agents[0].Rates {
		speeds[r.Name] = r.SpeedMbps
	}
	if sp, ok := speeds[vHost]; !ok || sp != 10000 {
		t.Errorf("agent's %s speed_mbps %d (reported: %v), want 10000", vHost, sp, ok)
	}
	if sp, ok := speeds["lo"]; !ok || sp != 0 {
		t.Errorf("agent's lo speed_mbps %d (reported: %v), want 0", sp, ok)
	}
	t.Logf("port %+v\nproc %+v\ntarget %+v", ports, p, tg)
	for _, c := range []*process{old, fresh, srv} {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	}
	agent.stop(t)
	hub.stop(t)
}
