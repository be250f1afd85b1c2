package hub

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/storetest"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// netmonBinary builds the netmon binary once per test run.
func netmonBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "netmon-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "netmon")
		out, err := exec.Command("go", "build", "-o", builtBin, "netmon").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// process is a netmon process of the test.
type process struct {
	cmd  *exec.Cmd
	logs *logBuffer
}

func startProc(t testing.TB, dir string, env []string, args ...string) *process {
	t.Helper()
	return startCmd(t, dir, env, netmonBinary(t), args...)
}

// startCmd is startProc for any command line (the binary under prlimit).
func startCmd(t testing.TB, dir string, env []string, name string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(name, args...), logs: &logBuffer{}}
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *process) stop(t testing.TB) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s exited with %v\n%s", p.cmd.Args[1], err, p.logs)
		}
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("%s did not stop within 30 s\n%s", p.cmd.Args[1], p.logs)
	}
}

// TestAgentProcessesSurviveHubRestart is the fleet end to end with real
// processes (issue 6; RELIABILITY cases 8 and 13): a hub binary and three
// `netmon agent` binaries on loopback enroll and send telemetry every
// second; the hub is stopped for a while and started again; afterwards
// every batch each agent produced is stored exactly once and in order, or
// still waits in that agent's spool — none lost, none doubled.
func TestAgentProcessesSurviveHubRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	dir := t.TempDir()
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	dbPath := filepath.Join(dir, "netmon.db")
	hubArgs := []string{"hub", "-port", strconv.Itoa(port), "-db", dbPath, "-enroll-token", testStaticToken, "-agent-interval", "1",
		"-capture=false", "-geoip-dir", filepath.Join(dir, "geoip"), "-record-dir", filepath.Join(dir, "captures"), "-ip-online-lookup=false", "-log-level", "warn"}
	hubEnv := []string{"NETMON_VAULT_KEY_FILE=" + filepath.Join(dir, "vault.key")}
	hub := startProc(t, dir, hubEnv, hubArgs...)
	waitHTTP(t, base+"/readyz")

	const agents = 3
	var procs []*process
	var states []string
	for i := range agents {
		adir := filepath.Join(dir, fmt.Sprintf("agent%d", i))
		if err := os.MkdirAll(adir, 0o700); err != nil {
			t.Fatal(err)
		}
		state := filepath.Join(adir, "netmon-agent.state.json")
		states = append(states, state)
		procs = append(procs, startProc(t, adir, nil, "agent", "-hub-url", base, "-hub-token", testStaticToken,
			"-state", state, "-name", fmt.Sprintf("e2e-%d", i), "-log-level", "debug"))
	}

	type item struct {
		ID     int64  `json:"id"`
		Name   string `json:"name"`
		Online bool   `json:"online"`
	}
	listAgents := func() []item {
		resp, err := http.Get(base + "/api/v1/agents")
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		var out []item
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	// History points exist from each agent's second batch on.
	points := func(id int64) int {
		resp, err := http.Get(fmt.Sprintf("%s/api/v1/agents/%d/history?minutes=60", base, id))
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		var out []json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return len(out)
	}
	waitFor(t, 30*time.Second, "three agents online with telemetry", func() bool {
		list := listAgents()
		if len(list) != agents {
			return false
		}
		for _, a := range list {
			if !a.Online || points(a.ID) < 2 {
				return false
			}
		}
		return true
	}, func() string {
		return fmt.Sprintf("agents %+v\nhub:\n%s\nagent 0:\n%s", listAgents(), hub.logs, procs[0].logs)
	})

	// The hub goes away for a while: agents keep producing and spool.
	hub.stop(t)
	seqAtStop := make([]uint64, agents)
	for i, s := range states {
		seqAtStop[i] = nextSeq(t, s)
	}
	outage := 6 * time.Second
	time.Sleep(outage)
	seqAtRestart := make([]uint64, agents)
	for i, s := range states {
		seqAtRestart[i] = nextSeq(t, s)
	}
	hub = startProc(t, dir, hubEnv, hubArgs...)
	waitHTTP(t, base+"/readyz")
	// Backoff is at most 8 intervals (+20% jitter): 15 s after the restart
	// every agent has had time to send what it spooled during the outage.
	time.Sleep(15 * time.Second)

	for _, p := range procs {
		p.stop(t)
	}
	hub.stop(t)

	db, err := store.Open(context.Background(), discardLog(), store.Config{DSN: dbPath, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stored, err := db.ListAgents(context.Background(), "")
	if err != nil || len(stored) != agents {
		t.Fatalf("%d agents stored (%v), want %d", len(stored), err, agents)
	}
	for _, a := range stored {
		i := int(a.Name[len(a.Name)-1] - '0')
		seqs, err := storetest.AgentSeqs(context.Background(), db, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		produced := nextSeq(t, states[i]) - 1
		spooled := spoolSeqs(t, states[i]+".queue.jsonl")
		// Stored: exactly 1..M, each once (the primary key forbids a
		// second copy; a gap would be a lost batch).
		for k, s := range seqs {
			if s != uint64(k+1) {
				t.Fatalf("agent %s: stored seqs %v are not 1..%d in order", a.Name, seqs, len(seqs))
			}
		}
		m := uint64(len(seqs))
		if m < seqAtRestart[i]-1 || seqAtRestart[i]-seqAtStop[i] < 4 {
			t.Errorf("agent %s: %d batches stored; it had produced %d before the hub stopped and %d by its restart", a.Name, m, seqAtStop[i]-1, seqAtRestart[i]-1)
		}
		// The rest (if any) waits in the spool, in order, up to the last
		// batch produced: stored ∪ spooled = 1..produced.
		next := m + 1
		for _, s := range spooled {
			if s < next {
				continue // a line already sent, kept until compaction
			}
			if s != next {
				t.Fatalf("agent %s: spool holds %v after %d stored: batch %d is missing", a.Name, spooled, m, next)
			}
			next++
		}
		if next-1 != produced {
			t.Errorf("agent %s: produced %d batches, stored %d and spooled up to %d", a.Name, produced, m, next-1)
		}
		t.Logf("agent %s: %d batches produced (%d while the hub was down), %d stored exactly once and in order, %d left in its spool at stop",
			a.Name, produced, seqAtRestart[i]-seqAtStop[i], m, produced-m)
		if a.Dropped != 0 {
			t.Errorf("agent %s reported %d dropped batches", a.Name, a.Dropped)
		}
	}
}

// nextSeq reads the agent state file's next telemetry seq.
func nextSeq(t *testing.T, path string) uint64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		NextSeq uint64 `json:"next_seq"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state file %s: %v", path, err)
	}
	return st.NextSeq
}

// spoolSeqs lists the seqs in an agent's offline queue file, in file order.
func spoolSeqs(t *testing.T, path string) []uint64 {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []uint64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		var b struct {
			Seq uint64 `json:"seq"`
		}
		if json.Unmarshal(sc.Bytes(), &b) == nil {
			out = append(out, b.Seq)
		}
	}
	return out
}

func waitHTTP(t testing.TB, url string) {
	t.Helper()
	waitFor(t, 30*time.Second, url, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, func() string { return "" })
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool, detail func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s\n%s", d, what, detail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAgentProcessPinsHubCA: a real agent against a real hub with -tls
// trusts the hub on first use, pins its CA and gets a client certificate;
// when the hub comes back with another CA (a swapped or impostor hub) the
// agent refuses it loudly and sends it nothing.
func TestAgentProcessPinsHubCA(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	dir := t.TempDir()
	port := freePort(t)
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	hubWith := func(tlsDir, db string) *process {
		p := startProc(t, dir, []string{"NETMON_VAULT_KEY_FILE=" + filepath.Join(dir, "vault.key")}, "hub", "-port", strconv.Itoa(port),
			"-db", filepath.Join(dir, db), "-enroll-token", testStaticToken, "-agent-interval", "1", "-tls", "-tls-dir", filepath.Join(dir, tlsDir),
			"-tls-hosts", "127.0.0.1", "-capture=false", "-geoip-dir", filepath.Join(dir, "geoip"), "-ip-online-lookup=false", "-log-level", "warn")
		waitFor(t, 30*time.Second, "hub ready over TLS", func() bool {
			resp, err := insecure.Get(base + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		}, func() string { return p.logs.String() })
		return p
	}
	agentsOn := func() []struct {
		ID           int64 `json:"id"`
		LastSeen     int64 `json:"last_seen"`
		CertNotAfter int64 `json:"cert_not_after"`
	} {
		var out []struct {
			ID           int64 `json:"id"`
			LastSeen     int64 `json:"last_seen"`
			CertNotAfter int64 `json:"cert_not_after"`
		}
		if resp, err := insecure.Get(base + "/api/v1/agents"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
		}
		return out
	}
	hub := hubWith("tls-a", "a.db")
	adir := filepath.Join(dir, "agent")
	_ = os.MkdirAll(adir, 0o700)
	state := filepath.Join(adir, "netmon-agent.state.json")
	agent := startProc(t, adir, nil, "agent", "-hub-url", base, "-hub-token", testStaticToken, "-state", state, "-name", "tofu", "-log-level", "debug")
	waitFor(t, 30*time.Second, "the agent enrolled over TLS with a client certificate", func() bool {
		as := agentsOn()
		return len(as) == 1 && as[0].LastSeen > 0 && as[0].CertNotAfter > 0
	}, func() string { return agent.logs.String() + hub.logs.String() })
	pinned, err := os.ReadFile(filepath.Join(dir, "tls-a", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(state + ".ca"); string(got) != string(pinned) {
		t.Errorf("the agent pinned %q, want the hub's CA", got)
	}
	hub.stop(t)

	// Another hub on the same address with its own, different CA.
	impostor := hubWith("tls-b", "b.db")
	time.Sleep(12 * time.Second) // beyond the agent's longest backoff at a 1 s interval
	if as := agentsOn(); len(as) != 0 {
		t.Errorf("the agent enrolled with or sent to a hub with another CA: %+v", as)
	}
	sum := func(pemFile string) string {
		raw, _ := os.ReadFile(pemFile)
		blk, _ := pem.Decode(raw)
		if blk == nil {
			t.Fatalf("no certificate in %s", pemFile)
		}
		h := sha256.Sum256(blk.Bytes)
		return hex.EncodeToString(h[:])
	}
	logs := agent.logs.String()
	if !strings.Contains(logs, "level=ERROR msg=\"hub certificate refused") || !strings.Contains(logs, "trusted_ca_sha256="+sum(filepath.Join(dir, "tls-a", "ca.crt"))) ||
		!strings.Contains(logs, "presented_ca_sha256="+sum(filepath.Join(dir, "tls-b", "ca.crt"))) {
		t.Errorf("the agent did not refuse the swapped CA loudly, naming both CAs:\n%s", logs)
	}
	agent.stop(t)
	impostor.stop(t)
}
