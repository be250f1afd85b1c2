package attr

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"netmon/agentmode/wire"
)

// The eBPF backend against real processes in two network namespaces made
// by the test: curl downloads a known file from a Python HTTP server, a
// Python client sends known UDP datagrams to a Python receiver. The
// backend runs in this process (its programs see every namespace); the
// clients' rows must carry their name and PID and the bytes they moved.
// Other engineers' traffic on the shared host shows up too: only the
// clients' PIDs are checked.
func TestEBPFEndToEnd(t *testing.T) {
	needPeers(t, "ip", "curl", "/usr/bin/python3")
	b, st := Open(slog.New(slog.NewTextHandler(os.Stderr, nil)), Config{Method: MethodAuto})
	if b == nil || st.Method != MethodEBPF {
		t.Fatalf("auto did not start ebpf as root on this kernel: %+v", st)
	}
	defer b.Stop()

	dir := t.TempDir()
	id := strconv.Itoa(os.Getpid() % 100000)
	nsA, nsB, vA, vB := "ebpfA"+id, "ebpfB"+id, "ebA"+id, "ebB"+id
	run(t, "ip", "netns", "add", nsA)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", nsA).Run() })
	run(t, "ip", "netns", "add", nsB)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", nsB).Run() })
	run(t, "ip", "link", "add", vA, "netns", nsA, "type", "veth", "peer", "name", vB, "netns", nsB)
	run(t, "ip", "-n", nsA, "addr", "add", "192.0.2.1/24", "dev", vA)
	run(t, "ip", "-n", nsB, "addr", "add", "192.0.2.2/24", "dev", vB)
	for _, nl := range [][2]string{{nsA, vA}, {nsB, vB}, {nsA, "lo"}, {nsB, "lo"}} {
		run(t, "ip", "-n", nl[0], "link", "set", nl[1], "up")
	}

	const bodySize = 3_000_000
	if err := os.WriteFile(filepath.Join(dir, "body.bin"), bytes.Repeat([]byte("x"), bodySize), 0o644); err != nil {
		t.Fatal(err)
	}
	httpd := daemon(t, filepath.Join(dir, "http.log"), "ip", "netns", "exec", nsB, "/usr/bin/python3", "-m", "http.server", "--bind", "192.0.2.2", "--directory", dir, "8080")
	const dgrams, dgramSize = 200, 1000
	recv := daemon(t, filepath.Join(dir, "udp.log"), "ip", "netns", "exec", nsB, "/usr/bin/python3", "-c",
		"import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\ns.bind(('192.0.2.2',9999))\nwhile True: s.recvfrom(65535)")
	waitPort(t, nsB, "192.0.2.2:8080")
	b.Collect() // start a clean interval

	curlOut, curlPID := client(t, nsA, nil, "curl", "-sS", "-o", "/dev/null", "-w", "%{size_download} %{size_header} %{size_request}", "http://192.0.2.2:8080/body.bin")
	var down, header, request int
	if _, err := fmt.Sscan(curlOut, &down, &header, &request); err != nil || down != bodySize {
		t.Fatalf("curl said %q", curlOut)
	}
	_, udpPID := client(t, nsA, nil, "/usr/bin/python3", "-c", fmt.Sprintf(
		"import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\ns.connect(('192.0.2.2',9999))\nfor _ in range(%d):\n  s.send(b'u'*%d)\n  time.sleep(0.001)", dgrams, dgramSize))

	r := b.Collect()
	p := findProcess(r, "curl", int32(curlPID))
	if p == nil {
		t.Fatalf("no row for curl pid %d in %+v", curlPID, r.Processes)
	}
	var http *wire.Remote
	for i, rm := range p.Remotes {
		if rm.Proto == "tcp" && rm.IP == "192.0.2.2" && rm.Port == 8080 {
			http = &p.Remotes[i]
		}
	}
	if http == nil {
		t.Fatalf("no 192.0.2.2:8080 in curl's destinations %+v", p.Remotes)
	}
	wantIn := float64(down + header)
	t.Logf("curl pid %d: in %d out %d; curl says in %d out %d", curlPID, http.BytesIn, http.BytesOut, down+header, request)
	if math.Abs(float64(http.BytesIn)-wantIn) > wantIn/100 || http.BytesOut != uint64(request) {
		t.Errorf("curl bytes in/out %d/%d, curl says %d/%d", http.BytesIn, http.BytesOut, down+header, request)
	}

	// The server wrote what curl read, and read what curl wrote.
	if sv := findProcess(r, "python3", int32(httpd.Process.Pid)); sv == nil || sv.BytesOut != http.BytesIn || sv.BytesIn != http.BytesOut {
		t.Errorf("http server pid %d: %+v, want out %d in %d", httpd.Process.Pid, sv, http.BytesIn, http.BytesOut)
	}

	// The UDP client: python3 under its PID, every datagram sent.
	u := findProcess(r, "python3", int32(udpPID))
	if u == nil {
		t.Fatalf("no row for the UDP client pid %d in %+v", udpPID, r.Processes)
	}
	if u.BytesOut != dgrams*dgramSize || u.PacketsOut != dgrams || len(u.Remotes) != 1 ||
		u.Remotes[0] != (wire.Remote{Proto: "udp", IP: "192.0.2.2", Port: 9999, BytesOut: dgrams * dgramSize, PacketsOut: dgrams}) {
		t.Errorf("udp client %+v", u)
	}
	// The receiver (unconnected): the same bytes in, no remote row. A
	// datagram lost on the veth would show here, so allow 1%.
	rv := findProcess(r, "python3", int32(recv.Process.Pid))
	if rv == nil || math.Abs(float64(rv.BytesIn)-dgrams*dgramSize) > dgrams*dgramSize/100 || len(rv.Remotes) != 0 {
		t.Errorf("udp receiver pid %d: %+v", recv.Process.Pid, rv)
	}
}

const refusalHelperEnv = "NETMON_ATTR_REFUSAL_HELPER"

// TestRefusalHelperProcess prints the Status of Open(auto) with a
// missing pcap interface; it does nothing unless started by
// TestEBPFRefusedWithoutPrivilege.
func TestRefusalHelperProcess(t *testing.T) {
	if os.Getenv(refusalHelperEnv) == "" {
		return
	}
	b, st := Open(slog.New(slog.NewTextHandler(io.Discard, nil)), Config{Method: MethodAuto, PcapInterface: "nosuch0"})
	if b != nil {
		_ = b.Stop()
	}
	fmt.Printf("status %s|%s\n", st.Method, st.Note)
}

// Without privilege (setpriv: user nobody, no capabilities) auto refuses
// ebpf then pcap, and the note says exactly why, in order.
func TestEBPFRefusedWithoutPrivilege(t *testing.T) {
	needPeers(t, "setpriv")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "attr.test")
	raw, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, raw, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
		bin, "-test.run=^TestRefusalHelperProcess$")
	cmd.Env = append(os.Environ(), refusalHelperEnv+"=1")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "status off|ebpf: needs CAP_BPF and CAP_PERFMON, or root; pcap: interface \"nosuch0\" not found\n"
	if !strings.Contains(string(out), want) {
		t.Fatalf("output %q, want %q", out, want)
	}
}
