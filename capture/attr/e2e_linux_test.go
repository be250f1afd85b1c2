package attr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"netmon/agentmode/wire"
)

// The end-to-end test runs real clients and servers in two network
// namespaces made for it, joined by a veth pair, and the pcap backend in
// the client's namespace (a child process: the test binary re-executed
// under `ip netns exec`, so its socket tables and interfaces are that
// namespace's). It checks what the backend reports against what the
// clients say they moved.

const helperEnv = "NETMON_ATTR_E2E_HELPER"

// helperMethodEnv is the helper's collect.method (pcap when unset).
const helperMethodEnv = "NETMON_ATTR_E2E_METHOD"

// TestPcapHelperProcess is the backend side of TestEndToEnd: it does
// nothing unless started by it.
func TestPcapHelperProcess(t *testing.T) {
	iface := os.Getenv(helperEnv)
	if iface == "" {
		return
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	method := os.Getenv(helperMethodEnv)
	if method == "" {
		method = MethodPcap
	}
	b, st := Open(log, Config{Method: method, PcapInterface: iface})
	if b == nil {
		fmt.Printf("error %s\n", st.Note)
		return
	}
	fmt.Printf("ready %s %s\n", st.Method, st.Iface)
	// One report per line read from stdin, until it closes.
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		raw, _ := json.Marshal(b.Collect())
		fmt.Printf("%s\n", raw)
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
}

// needPeers checks root and the tools; missing ones fail under CI=true.
func needPeers(t testing.TB, tools ...string) {
	t.Helper()
	missing := []string{}
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("missing %v (make deps installs the tools)", missing)
	}
	t.Skipf("missing %v", missing)
}

// run runs a command and fails the test with its output on error.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// daemon starts a long-running command and stops it (by its PID) at the
// end of the test.
func daemon(t testing.TB, logPath string, name string, args ...string) *exec.Cmd {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
	})
	return cmd
}

// waitPort waits until a TCP port answers inside namespace ns.
func waitPort(t *testing.T, ns, addr string) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command("ip", "netns", "exec", ns, "bash", "-c", "exec 3<>/dev/tcp/"+host+"/"+port).Run() == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not open in %s", addr, ns)
}

// lingering is a stdin that ends after d: a client that talks, then
// stays a moment before it exits, as real clients do.
type lingering struct{ d time.Duration }

func (l lingering) Read([]byte) (int, error) { time.Sleep(l.d); return 0, io.EOF }

// client runs a client in namespace ns; `ip netns exec` execs in place,
// so the returned PID is the client's own.
func client(t *testing.T, ns string, stdin io.Reader, name string, args ...string) (out string, pid int) {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, name}, args...)...)
	cmd.Stdin = stdin
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, buf.String())
	}
	return buf.String(), cmd.Process.Pid
}

// TestEndToEnd runs the scenario with each Linux backend: pcap alone,
// and ebpf (bytes from the kernel) with pcap beside it for the names.
func TestEndToEnd(t *testing.T) {
	for _, method := range []string{MethodPcap, MethodEBPF} {
		t.Run(method, func(t *testing.T) { endToEnd(t, method) })
	}
}

func endToEnd(t *testing.T, method string) {
	needPeers(t, "ip", "curl", "openssl", "dnsmasq", "dig", "/usr/bin/python3")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // dnsmasq drops to nobody
		t.Fatal(err)
	}
	id := method[:1] + strconv.Itoa(os.Getpid()%100000)
	nsA, nsB, vA, vB := "attrA"+id, "attrB"+id, "atA"+id, "atB"+id
	run(t, "ip", "netns", "add", nsA)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", nsA).Run() })
	run(t, "ip", "netns", "add", nsB)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", nsB).Run() })
	run(t, "ip", "link", "add", vA, "netns", nsA, "type", "veth", "peer", "name", vB, "netns", nsB)
	run(t, "ip", "-n", nsA, "addr", "add", "192.0.2.1/24", "dev", vA)
	run(t, "ip", "-n", nsB, "addr", "add", "192.0.2.2/24", "dev", vB)
	for _, ns := range []string{nsA, nsB} {
		run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	run(t, "ip", "-n", nsA, "link", "set", vA, "up")
	// `ip netns exec` bind-mounts /etc/netns/<ns>/resolv.conf: the
	// clients in nsA resolve names through the DNS server in nsB.
	if err := os.MkdirAll("/etc/netns/"+nsA, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll("/etc/netns/" + nsA) })
	if err := os.WriteFile("/etc/netns/"+nsA+"/resolv.conf", []byte("nameserver 192.0.2.2\noptions attempts:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "ip", "-n", nsB, "link", "set", vB, "up")

	// Servers in nsB: HTTP with a 2 MB file, TLS, DNS.
	const bodySize = 2_000_000
	if err := os.WriteFile(filepath.Join(dir, "body.bin"), bytes.Repeat([]byte("netmon-e2e\n"), bodySize/11+1)[:bodySize], 0o644); err != nil {
		t.Fatal(err)
	}
	daemon(t, filepath.Join(dir, "http.log"), "ip", "netns", "exec", nsB, "/usr/bin/python3", "-m", "http.server", "--bind", "192.0.2.2", "--directory", dir, "8080")
	run(t, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", filepath.Join(dir, "key.pem"), "-out", filepath.Join(dir, "cert.pem"),
		"-days", "2", "-subj", "/CN=app.example.test", "-addext", "subjectAltName=DNS:app.example.test")
	daemon(t, filepath.Join(dir, "s_server.log"), "ip", "netns", "exec", nsB, "openssl", "s_server", "-accept", "192.0.2.2:8443",
		"-cert", filepath.Join(dir, "cert.pem"), "-key", filepath.Join(dir, "key.pem"), "-www")
	daemon(t, filepath.Join(dir, "dnsmasq.log"), "ip", "netns", "exec", nsB, "dnsmasq", "-k", "--no-resolv", "--no-hosts",
		"--address=/example.test/192.0.2.2", "--local=/example.test/", "--address=/#/", "--listen-address=192.0.2.2",
		"--bind-interfaces", "--port=53", "--pid-file="+filepath.Join(dir, "dnsmasq.pid"), "--log-facility=-")
	waitPort(t, nsB, "192.0.2.2:8080")
	waitPort(t, nsB, "192.0.2.2:8443")
	waitPort(t, nsB, "192.0.2.2:53")

	// The backend in nsA, on the veth.
	helper := exec.Command("ip", "netns", "exec", nsA, os.Args[0], "-test.run=^TestPcapHelperProcess$", "-test.v=false")
	helper.Env = append(os.Environ(), helperEnv+"="+vA, helperMethodEnv+"="+method)
	helperIn, _ := helper.StdinPipe()
	helperOutR, _ := helper.StdoutPipe()
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = helperIn.Close(); _ = helper.Process.Kill(); _ = helper.Wait() })
	helperOut := bufio.NewReader(helperOutR)
	line, err := helperOut.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready "+method+" "+vA) {
		t.Fatalf("backend did not start: %q %v", line, err)
	}

	// The clients in nsA. curl resolves host1.example.test through the
	// DNS server (its resolver's socket lives about a millisecond), then
	// downloads; its rate limit keeps the transfer about two seconds long,
	// like a real download, rather than a few milliseconds (at one second
	// a CI run under load once saw no socket lookup find it in time).
	curlOut, curlPID := client(t, nsA, nil, "curl", "-sS", "-o", "/dev/null", "--limit-rate", "1M",
		"-w", "%{size_download} %{size_header} %{size_request}", "http://host1.example.test:8080/body.bin")
	var down, header, request int
	if _, err := fmt.Sscan(curlOut, &down, &header, &request); err != nil || down != bodySize {
		t.Fatalf("curl said %q", curlOut)
	}
	_, sslPID := client(t, nsA, lingering{300 * time.Millisecond}, "openssl", "s_client", "-connect", "192.0.2.2:8443", "-servername", "app.example.test")
	// curl over TLS to the same name: a client of a few milliseconds,
	// often gone before its socket can be looked up, so only its SNI is
	// checked (for it or for "(unattributed)").
	_, curlTLSPID := client(t, nsA, nil, "curl", "-sSk", "-o", "/dev/null", "https://app.example.test:8443/")
	digOut, _ := client(t, nsA, nil, "dig", "+short", "+tries=1", "@192.0.2.2", "dig.example.test", "A")
	if strings.TrimSpace(digOut) != "192.0.2.2" {
		t.Fatalf("dig said %q", digOut)
	}
	// Names the spec says are never reported.
	client(t, nsA, nil, "dig", "+short", "+tries=1", "@192.0.2.2", "-x", "192.0.2.2")
	client(t, nsA, nil, "dig", "+short", "+tries=1", "@192.0.2.2", "wpad", "A")

	if _, err := io.WriteString(helperIn, "collect\n"); err != nil {
		t.Fatal(err)
	}
	line, err = helperOut.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("%v: %q", err, line)
	}
	t.Logf("report: %s", line)

	// curl: the HTTP response it read (headers and body) and the request
	// it wrote, within 1% in all, under its own name and PID, to the
	// server's address and port. (Its resolver's DNS exchange may be
	// there too, as a udp/53 destination.) Out alone is a 95-byte
	// request, where a window probe's byte would be over 1%: it must hold
	// at least the request.
	p := findProcess(r, "curl", int32(curlPID))
	if p == nil {
		t.Fatalf("no row for curl pid %d", curlPID)
	}
	var http *wire.Remote
	for i, rm := range p.Remotes {
		switch {
		case rm.Proto == "tcp" && rm.IP == "192.0.2.2" && rm.Port == 8080:
			http = &p.Remotes[i]
		case rm.Proto == "udp" && rm.IP == "192.0.2.2" && rm.Port == 53:
		default:
			t.Errorf("unexpected curl destination %+v", rm)
		}
	}
	if http == nil {
		t.Fatalf("no 192.0.2.2:8080 in curl's destinations %+v", p.Remotes)
	}
	wantIn, wantTotal := float64(down+header), float64(down+header+request)
	if math.Abs(float64(http.BytesIn)-wantIn) > wantIn/100 || math.Abs(float64(http.BytesIn+http.BytesOut)-wantTotal) > wantTotal/100 ||
		http.BytesOut < uint64(request) || p.BytesIn < http.BytesIn || p.BytesOut < http.BytesOut {
		t.Errorf("curl bytes in/out %d/%d (process %d/%d), curl says %d/%d", http.BytesIn, http.BytesOut, p.BytesIn, p.BytesOut, down+header, request)
	}
	if !hasL7(r, "host1.example.test", wire.KindHTTP, "curl", int32(curlPID)) {
		t.Errorf("no Host host1.example.test for curl in %+v", r.L7)
	}
	if !hasL7(r, "app.example.test", wire.KindTLS, "curl", int32(curlTLSPID)) && !hasL7(r, "app.example.test", wire.KindTLS, wire.UnattributedProcess, 0) {
		t.Errorf("no SNI app.example.test for curl pid %d in %+v", curlTLSPID, r.L7)
	}
	if !hasL7(r, "app.example.test", wire.KindTLS, "openssl", int32(sslPID)) {
		t.Errorf("no SNI app.example.test for openssl pid %d in %+v", sslPID, r.L7)
	}
	// curl asked host1.example.test; dig asked dig.example.test and
	// exited within a millisecond, which pcap cannot tie to a process
	// (its socket is gone before any lookup) but still reports.
	var sawCurl, sawDig bool
	for _, d := range r.DNS {
		switch {
		case d.Domain == "host1.example.test" && d.Process == "curl" && d.PID == int32(curlPID):
			sawCurl = d.Queries >= 1 && d.Responses >= 1
		case d.Domain == "dig.example.test":
			sawDig = d.Queries == 1 && d.Responses == 1
		case d.Domain == "wpad" || strings.HasSuffix(d.Domain, ".arpa"):
			t.Errorf("excluded name reported: %+v", d)
		}
	}
	if !sawCurl || !sawDig {
		t.Errorf("curl (pid %d) asking host1.example.test: %v; dig.example.test: %v; in %+v", curlPID, sawCurl, sawDig, r.DNS)
	}
}

func findProcess(r Report, name string, pid int32) *wire.ProcessTraffic {
	for i := range r.Processes {
		if r.Processes[i].Process == name && r.Processes[i].PID == pid {
			return &r.Processes[i]
		}
	}
	return nil
}

func hasL7(r Report, host, kind, process string, pid int32) bool {
	for _, o := range r.L7 {
		if o.Host == host && o.Kind == kind && o.Process == process && o.PID == pid && o.Hits == 1 {
			return true
		}
	}
	return false
}

// TestPcapRefusedWithoutPrivilege runs the backend as an unprivileged
// user (setpriv, no capabilities): it must refuse with the precise note.
func TestPcapRefusedWithoutPrivilege(t *testing.T) {
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
		bin, "-test.run=^TestPcapHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"=lo")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "error pcap: needs CAP_NET_RAW or root\n") {
		t.Fatalf("output %q", out)
	}
}
