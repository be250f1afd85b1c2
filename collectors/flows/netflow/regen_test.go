package netflow

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// counts is testdata/flows/netflow/counts.json: for each export, the
// flows the reference collector (nfcapd, counted with nfdump) stored
// from exactly the datagrams of the fixture, and what softflowd itself
// said it exported.
type counts struct {
	Nfdump    map[string]int `json:"nfdump"`
	Softflowd map[string]int `json:"softflowd"`
}

const countsFile = "counts.json"

// TestRegenerate rebuilds the fixtures: in.pcap, one softflowd export per
// version captured on a UDP socket, and counts.json (each export replayed
// datagram by datagram to nfcapd and counted with nfdump).
func TestRegenerate(t *testing.T) {
	if !*regen {
		t.Skip("needs -regen-netflow (and softflowd, nfcapd, nfdump)")
	}
	for _, tool := range []string{"softflowd", "nfcapd", "nfdump"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not installed: apt-get install -y softflowd nfdump", tool)
		}
	}
	in := filepath.Join(fixtureDir, "in.pcap")
	writeInput(t, in)
	c := counts{Nfdump: map[string]int{}, Softflowd: map[string]int{}}
	for _, e := range exports {
		ds, exported := runSoftflowd(t, in, e)
		writeDatagrams(t, filepath.Join(fixtureDir, e.name), ds)
		c.Softflowd[e.name] = exported
		c.Nfdump[e.name] = nfdumpCount(t, ds)
		t.Logf("%s: %s; softflowd exported %d, nfdump counted %d", e.name, headerSummary(ds), exported, c.Nfdump[e.name])
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	if err := os.WriteFile(filepath.Join(fixtureDir, countsFile), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// exportedRe matches softflowd's exit statistics line
// "Flows exported: N (N records) in P packets" (softflowd 1.1.0, -D).
var exportedRe = regexp.MustCompile(`Flows exported: (\d+)`)

// runSoftflowd feeds in.pcap to softflowd and captures what it sends.
func runSoftflowd(t *testing.T, in string, e export) ([]datagram, int) {
	l := listenUDP(t)
	dir := t.TempDir()
	args := append([]string{"-D", "-r", in, "-n", fmt.Sprintf("127.0.0.1:%d", l.port()), "-v", e.version,
		"-m", "65536", "-6", "-p", filepath.Join(dir, "x.pid"), "-c", "none", "-a"}, e.extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "softflowd", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("softflowd %v: %v\n%s", args, err, out)
	}
	ds := l.drain(time.Second)
	exported := -1
	for _, m := range exportedRe.FindAllSubmatch(out, -1) {
		exported, _ = strconv.Atoi(string(m[1]))
	}
	if exported < 0 {
		t.Logf("softflowd output:\n%s", out)
	}
	return ds, exported
}

// nfdumpCount replays datagrams to nfcapd and counts what it stored.
func nfdumpCount(t *testing.T, ds []datagram) int {
	dir := t.TempDir()
	// nfcapd cannot be handed a listening socket: pick a free port.
	probe, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IP{127, 0, 0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	port := probe.LocalAddr().(*net.UDPAddr).Port
	_ = probe.Close()
	cmd := exec.Command("nfcapd", "-w", dir, "-b", "127.0.0.1", "-p", strconv.Itoa(port), "-t", "60", "-B", "4194304")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // nfcapd binds after start-up
	conn, err := net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IP{127, 0, 0, 1}, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if _, err := conn.Write(d.data); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // stay under the socket buffer
	}
	_ = conn.Close()
	time.Sleep(time.Second)
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	out, err := exec.Command("nfdump", "-R", dir, "-q", "-o", "csv").CombinedOutput()
	if err != nil {
		t.Fatalf("nfdump: %v\n%s\nnfcapd: %s", err, out, log.String())
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		// csv output: a header line naming the columns, then one line
		// per flow.
		if line == "" || bytes.HasPrefix([]byte(line), []byte("ts,")) || bytes.HasPrefix([]byte(line), []byte("firstSeen")) {
			continue
		}
		n++
	}
	t.Logf("nfcapd: %s", bytes.TrimSpace(log.Bytes()))
	return n
}
