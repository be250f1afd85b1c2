//go:build unix

package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"netmon/app/compliance"
	"netmon/store"
)

// complianceKills is how many times the hub binary is killed mid-burst:
// the 20 of RELIABILITY case 11.
const complianceKills = 20

// TestComplianceHubBinaryKill9 is RELIABILITY case 11 for the compliance
// log on the real binary: a `netmon hub -compliance` takes syslog lines as
// real UDP datagrams on its collector and is killed with SIGKILL in the
// middle of a burst, 20 times on the same SQLite file. After every
// restart the evidence bundle downloaded from the hub verifies with
// `netmon compliance verify` (its chain whole; exit 0, or 1 or 3 for the
// open hour that no checkpoint signs yet), its records are exactly seq
// 1..status.records (no gap), each line sent is in it at most once (no
// duplicate), everything the previous bundle held is still there with the
// same chain values (nothing rewritten), and every burst added records.
func TestComplianceHubBinaryKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it 20 times")
	}
	bin := netmonBinary(t)
	dir := t.TempDir()
	port, syslogPort := freePort(t), freeUDPPort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	dbPath, keyFile := filepath.Join(dir, "netmon.db"), filepath.Join(dir, "compliance.key")
	hubArgs := []string{"hub", "-port", strconv.Itoa(port), "-db", dbPath, "-compliance", "-compliance-key", keyFile,
		"-syslog-port", strconv.Itoa(syslogPort), "-capture=false", "-geoip-dir", filepath.Join(dir, "geoip"),
		"-record-dir", filepath.Join(dir, "captures"), "-ip-online-lookup=false", "-log-level", "warn"}
	hubEnv := []string{"NETMON_VAULT_KEY_FILE=" + filepath.Join(dir, "vault.key")}

	var prev []compliance.BundleLog
	for round := 0; round <= complianceKills; round++ {
		hub := startProc(t, dir, hubEnv, hubArgs...)
		waitHTTP(t, base+"/readyz")
		logs := checkComplianceAfterRestart(t, bin, base, dir, keyFile, round, prev)
		if round > 0 && len(logs) <= len(prev) {
			t.Fatalf("round %d: burst %d added no record (%d before, %d now)\n%s", round, round-1, len(prev), len(logs), hub.logs)
		}
		prev = logs
		if round == complianceKills {
			hub.stop(t)
			break
		}
		// A burst of unique lines; the kill lands in its middle.
		sent := burstSyslog(t, syslogPort, round, time.Duration(400+rand.IntN(600))*time.Millisecond, func() {
			_ = hub.cmd.Process.Signal(syscall.SIGKILL)
		})
		err := hub.cmd.Wait()
		if ws, ok := hub.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the hub was not killed by SIGKILL: %v\n%s", round, err, hub.logs)
		}
		t.Logf("round %d: killed after %d lines sent, %d records chained before the burst", round, sent, len(logs))
		// The file the hub was killed over, before anyone opens it again.
		sqliteIntegrity(t, dbPath, round)
	}
}

// burstSyslog sends unique RFC 3164 lines as fast as the socket takes them
// (with a pause every 200 lines so the collector is not simply flooded)
// for d, calls kill after half of d, and keeps sending until d is over,
// so the kill lands while datagrams arrive. It returns the lines sent.
func burstSyslog(t *testing.T, port, round int, d time.Duration, kill func()) int {
	t.Helper()
	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var killed sync.Once
	var sent atomic.Int64
	start := time.Now()
	for i := 0; time.Since(start) < d; i++ {
		if time.Since(start) > d/2 {
			killed.Do(kill)
		}
		// Refused datagrams (the hub is gone) are not an error of the test.
		if _, err := fmt.Fprintf(conn, "<38>Nov 24 10:00:00 fw sshd: kill9 r%d n%d Accepted password for bob from 192.0.2.%d", round, i, i%250); err == nil {
			sent.Add(1)
		}
		if i%200 == 199 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	killed.Do(kill)
	return int(sent.Load())
}

// checkComplianceAfterRestart downloads the evidence of yesterday and
// today from the running hub, runs the offline verifier binary on it and
// checks the chain against the previous round's. It returns the logs.
func checkComplianceAfterRestart(t *testing.T, bin, base, dir, keyFile string, round int, prev []compliance.BundleLog) []compliance.BundleLog {
	t.Helper()
	var st compliance.Status
	getJSON(t, base+"/api/v1/compliance/status", &st)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	url := fmt.Sprintf("%s/api/v1/compliance/evidence?from=%s&to=%s&mask=false", base,
		today.Add(-24*time.Hour).Format(time.DateOnly), today.Format(time.DateOnly))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("round %d: evidence %d %v: %s", round, resp.StatusCode, err, body)
	}
	file := filepath.Join(dir, fmt.Sprintf("evidence-%d.json", round))
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	// The hub runs on the real clock, so the records of its open hour are
	// signed by nothing yet: the verifier says so (exit 1 when no record
	// is signed, 3 when only the last ones are not) after it has checked
	// every record's chain value and the seq order, which fail first.
	cmd := exec.Command(bin, "compliance", "verify", file, "--pub", keyFile+".pub", "--quiet")
	out, err := cmd.CombinedOutput()
	switch code := cmd.ProcessState.ExitCode(); {
	case code == 0 && strings.Contains(string(out), "OK: "):
	case code == 3 && strings.Contains(string(out), "UNSEALED: "):
	case code == 1 && strings.Contains(string(out), "FAILED: bundle of ") && strings.Contains(string(out), compliance.ErrNothingSigned.Error()):
	case code == 1 && strings.Contains(string(out), "FAILED: records seq 1 to ") && strings.Contains(string(out), compliance.ErrNothingSigned.Error()):
	default:
		t.Fatalf("round %d: netmon compliance verify: %v\n%s", round, err, out)
	}
	var bundle struct {
		Logs []compliance.BundleLog `json:"logs"`
	}
	if err := json.Unmarshal(body, &bundle); err != nil {
		t.Fatal(err)
	}
	logs := bundle.Logs
	if int64(len(logs)) != st.Records {
		t.Fatalf("round %d: bundle holds %d records, status says %d", round, len(logs), st.Records)
	}
	seen := make(map[string]uint64, len(logs))
	for i, l := range logs {
		if l.Seq != uint64(i+1) {
			t.Fatalf("round %d: record %d has seq %d: a gap in the chain", round, i, l.Seq)
		}
		if l.Kind != "syslog" || len(l.F) != 6 || !strings.HasPrefix(l.F[5], "kill9 r") {
			t.Fatalf("round %d: unexpected record %+v", round, l)
		}
		if s, dup := seen[l.F[5]]; dup {
			t.Fatalf("round %d: line %q chained twice (seq %d and %d)", round, l.F[5], s, l.Seq)
		}
		seen[l.F[5]] = l.Seq
	}
	if len(logs) < len(prev) {
		t.Fatalf("round %d: %d records, %d before the kill: committed records lost", round, len(logs), len(prev))
	}
	for i, p := range prev {
		if logs[i].H != p.H || logs[i].F[5] != p.F[5] {
			t.Fatalf("round %d: seq %d rewritten after the restart: %+v, was %+v", round, p.Seq, logs[i], p)
		}
	}
	t.Logf("round %d: %d records verify: %s", round, len(logs), strings.TrimSpace(string(out)))
	return logs
}

// sqliteIntegrity runs PRAGMA integrity_check on the hub's database.
func sqliteIntegrity(t *testing.T, dbPath string, round int) {
	t.Helper()
	db, err := store.Open(context.Background(), discardLog(), store.Config{DSN: dbPath, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ok string
	if err := db.Reader().QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("round %d: integrity_check %q %v", round, ok, err)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}
