package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"netmon/app/procview"
)

// TestEBPFAgentThroughHub is issue 17's end to end through the hub's
// routes: a `netmon hub` binary and a `netmon agent -collect-method ebpf`
// binary (root: the eBPF programs see every network namespace); curl in
// a namespace made by the test downloads a known file from a Python HTTP
// server in another; GET /api/v1/processes and
// /api/v1/agents/{id}/processes/curl must report curl's bytes within 1%
// of what curl says it moved. The remote (an address of the test's own
// veth pair, on a port derived from the PID) is this test's only, so the
// destination row is exact; the fleet-wide curl row may also hold other
// engineers' curls on the shared host, hence the 1%, with a 10 MB body.
func TestEBPFAgentThroughHub(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	needRoot(t)
	for _, tool := range []string{"ip", "curl", "/usr/bin/python3"} {
		need(t, tool)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := strconv.Itoa(os.Getpid() % 100000)
	nsA, nsB, vA, vB := "hubebA"+id, "hubebB"+id, "hebA"+id, "hebB"+id
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", nsA)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", nsA).Run() })
	ip("netns", "add", nsB)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", nsB).Run() })
	ip("link", "add", vA, "netns", nsA, "type", "veth", "peer", "name", vB, "netns", nsB)
	ip("-n", nsA, "addr", "add", "198.51.100.1/24", "dev", vA)
	ip("-n", nsB, "addr", "add", "198.51.100.2/24", "dev", vB)
	for _, nl := range [][2]string{{nsA, vA}, {nsB, vB}, {nsA, "lo"}, {nsB, "lo"}} {
		ip("-n", nl[0], "link", "set", nl[1], "up")
	}

	const bodySize = 10_000_000
	if err := os.WriteFile(filepath.Join(dir, "body.bin"), bytes.Repeat([]byte("e"), bodySize), 0o644); err != nil {
		t.Fatal(err)
	}
	httpPort := 20000 + os.Getpid()%20000
	srv := startCmd(t, dir, nil, "ip", "netns", "exec", nsB, "/usr/bin/python3", "-m", "http.server",
		"--bind", "198.51.100.2", "--directory", dir, strconv.Itoa(httpPort))
	waitFor(t, 15*time.Second, "the http server", func() bool {
		return exec.Command("ip", "netns", "exec", nsA, "curl", "-sf", "-o", "/dev/null", "-r", "0-0",
			fmt.Sprintf("http://198.51.100.2:%d/body.bin", httpPort)).Run() == nil
	}, func() string { return srv.logs.String() })

	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	hub := startProc(t, dir, []string{"NETMON_VAULT_KEY_FILE=" + filepath.Join(dir, "vault.key")},
		"hub", "-port", strconv.Itoa(port), "-db", filepath.Join(dir, "netmon.db"), "-enroll-token", testStaticToken,
		"-auth-password", "admin-password-1", "-agent-interval", "1", "-capture=false",
		"-geoip-dir", filepath.Join(dir, "geoip"), "-record-dir", filepath.Join(dir, "captures"),
		"-ip-online-lookup=false", "-log-level", "warn")
	waitHTTP(t, base+"/readyz")
	agent := startProc(t, dir, nil, "agent", "-hub-url", base, "-hub-token", testStaticToken,
		"-state", filepath.Join(dir, "agent.state.json"), "-name", "ebpf-e2e", "-collect-method", "ebpf", "-log-level", "debug")

	token := adminToken(t, base)
	api := func(path string, out any) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
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
		return resp.StatusCode
	}
	type agentRow struct {
		ID         int64  `json:"id"`
		Online     bool   `json:"online"`
		AttrMethod string `json:"attr_method"`
		AttrNote   string `json:"attr_note"`
	}
	var agents []agentRow
	waitFor(t, 30*time.Second, "the agent online with collection running", func() bool {
		agents = nil
		return api("/api/v1/agents", &agents) == 200 && len(agents) == 1 && agents[0].Online && agents[0].AttrMethod != ""
	}, func() string { return fmt.Sprintf("agents %+v\nhub:\n%s\nagent:\n%s", agents, hub.logs, agent.logs) })
	if agents[0].AttrMethod != "ebpf" {
		t.Fatalf("agent collects with %q (%s), want ebpf", agents[0].AttrMethod, agents[0].AttrNote)
	}

	out, err := exec.Command("ip", "netns", "exec", nsA, "curl", "-sS", "-o", "/dev/null", "-w", "%{size_download} %{size_header} %{size_request}",
		fmt.Sprintf("http://198.51.100.2:%d/body.bin", httpPort)).Output()
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	var down, header, request int64
	if _, err := fmt.Sscan(string(out), &down, &header, &request); err != nil || down != bodySize {
		t.Fatalf("curl said %q", out)
	}
	wantIn, wantOut := down+header, request
	within := func(got, want int64) bool { return math.Abs(float64(got-want)) <= float64(want)/100 }

	// The destination row of curl on the process detail route: only this
	// test's curls went to 198.51.100.2:<httpPort> (the readiness probe
	// moved 1 byte of body plus headers before the agent started).
	detailPath := fmt.Sprintf("/api/v1/agents/%d/processes/curl?minutes=60", agents[0].ID)
	var d procview.Detail
	var dest *procview.Destination
	waitFor(t, 30*time.Second, "curl's bytes on the process detail route", func() bool {
		d, dest = procview.Detail{}, nil
		if api(detailPath, &d) != 200 {
			return false
		}
		for i, x := range d.Destinations {
			if x.RemoteIP == "198.51.100.2" && x.RemotePort == httpPort && x.Proto == "tcp" {
				dest = &d.Destinations[i]
			}
		}
		return dest != nil && dest.BytesIn >= wantIn
	}, func() string { return fmt.Sprintf("detail %+v\nagent:\n%s", d, agent.logs) })
	t.Logf("curl: in %d out %d; hub destination row: in %d out %d; curl summary in %d out %d",
		wantIn, wantOut, dest.BytesIn, dest.BytesOut, d.Summary.BytesIn, d.Summary.BytesOut)
	if !within(dest.BytesIn, wantIn) || !within(dest.BytesOut, wantOut) {
		t.Errorf("destination row in/out %d/%d, curl says %d/%d", dest.BytesIn, dest.BytesOut, wantIn, wantOut)
	}
	if d.Process != "curl" || !within(d.Summary.BytesIn, wantIn) {
		t.Errorf("curl summary %+v, want bytes in %d within 1%%", d.Summary, wantIn)
	}

	// The fleet-wide processes route: curl's row.
	var rows []struct {
		Process  string `json:"process"`
		BytesIn  int64  `json:"bytes_in"`
		BytesOut int64  `json:"bytes_out"`
	}
	if code := api("/api/v1/processes?minutes=60&limit=1000", &rows); code != 200 {
		t.Fatalf("GET /api/v1/processes: %d", code)
	}
	found := false
	for _, r := range rows {
		if r.Process == "curl" {
			found = true
			if !within(r.BytesIn, wantIn) {
				t.Errorf("fleet-wide curl bytes in %d, curl says %d", r.BytesIn, wantIn)
			}
		}
	}
	if !found {
		t.Errorf("no curl row in /api/v1/processes: %+v", rows)
	}
	agent.stop(t)
	hub.stop(t)
}

// adminToken logs in with the hub's admin password.
func adminToken(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/login", "application/json", strings.NewReader(`{"password":"admin-password-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lr struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&lr); err != nil || lr.Token == "" {
		t.Fatalf("login: %v %d", err, resp.StatusCode)
	}
	return lr.Token
}
