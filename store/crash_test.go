//go:build unix

package store_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/flowagg"
	"netmon/store/record"
	"netmon/store/storetest"
)

// Reliability case 11: a hub killed with SIGKILL in the middle of a write
// burst leaves an intact SQLite database holding every write it reported
// done, and each flow minute whole or not at all. The test re-executes its own binary as the writer (TestCrashHelper),
// kills it after a random 50-400 ms, then checks the file; 20 times on the
// same file, so later rounds also crash during recovery and checkpoints.

const (
	crashRounds       = 20
	crashEnvHelper    = "NETMON_CRASH_HELPER"
	crashEnvDB        = "NETMON_CRASH_DB"
	crashEnvFirstKey  = "NETMON_CRASH_FIRST_KEY"
	crashHelperLimit  = 10 * time.Second // the helper stops by itself if never killed
	crashAckPrefix    = "ACK "
	crashSingleWriter = 3 // goroutines writing one key per transaction
	crashBatchSize    = 10
)

// TestCrashHelper is the child side of TestSQLiteCrash; it does nothing
// unless NETMON_CRASH_HELPER=1. It writes keys k<N> (N counting up from
// NETMON_CRASH_FIRST_KEY) with value v<N>-<padding> from several goroutines,
// some one key per transaction with PutSetting, one in batches with InTx,
// and prints "ACK key value" only after the write returned nil.
func TestCrashHelper(t *testing.T) {
	if os.Getenv(crashEnvHelper) != "1" {
		return
	}
	first, err := strconv.ParseInt(os.Getenv(crashEnvFirstKey), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", crashEnvFirstKey, err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, slog.New(slog.DiscardHandler), store.Config{DSN: os.Getenv(crashEnvDB), MaxConns: 4})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var next atomic.Int64
	next.Store(first)
	newKV := func() (string, string) {
		n := next.Add(1) - 1
		// Some bulk so that the WAL grows and checkpoints run.
		return fmt.Sprintf("k%d", n), fmt.Sprintf("v%d-%s", n, strings.Repeat("x", 200))
	}
	var out sync.Mutex
	ack := func(lines string) {
		out.Lock()
		defer out.Unlock()
		// One write(2) per call, under PIPE_BUF: a kill never splits it.
		_, _ = os.Stdout.WriteString(lines)
	}

	deadline := time.Now().Add(crashHelperLimit)
	var wg sync.WaitGroup
	for range crashSingleWriter {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				k, v := newKV()
				if err := db.PutSetting(ctx, k, v); err != nil {
					t.Errorf("PutSetting: %v", err)
					return
				}
				ack(crashAckPrefix + k + " " + v + "\n")
			}
		})
	}
	wg.Go(func() {
		const upsert = `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
		for time.Now().Before(deadline) {
			var lines strings.Builder
			err := db.InTx(ctx, func(wtx *store.Tx) error {
				tx := wtx.SQL()
				lines.Reset()
				for range crashBatchSize {
					k, v := newKV()
					if _, err := tx.ExecContext(ctx, upsert, k, v, time.Now().Unix()); err != nil {
						return err
					}
					lines.WriteString(crashAckPrefix + k + " " + v + "\n")
				}
				return nil
			})
			if err != nil {
				t.Errorf("InTx: %v", err)
				return
			}
			ack(lines.String())
		}
	})
	// Flow minutes (issue 16): each written in one transaction, so after
	// the kill a minute is there whole or not at all.
	wg.Go(func() {
		for time.Now().Before(deadline) {
			n := next.Add(1)
			exp := netip.AddrFrom4([4]byte{192, byte(n >> 16), byte(n >> 8), byte(n)})
			ms := flowagg.Sums(flowagg.DefaultConfig(), crashMinute(exp))
			if _, err := db.WriteFlowMinutes(ctx, ms); err != nil {
				t.Errorf("WriteFlowMinutes: %v", err)
				return
			}
			ack(fmt.Sprintf("%sflow:%s %d\n", crashAckPrefix, exp, crashMinuteFlows))
		}
	})
	// Flow day tables created and dropped (issue 16): SQLite's view over
	// them is rebuilt in the same transaction, so a kill never leaves it
	// naming a dropped table (checked by verifyAfterCrash). Days of 2017,
	// far from the acknowledged minutes'.
	wg.Go(func() {
		for i := 0; time.Now().Before(deadline); i++ {
			day := int64(1_500_000_000) - 1_500_000_000%86400 + int64(i%40)*86400
			if err := db.EnsureFlowDays(ctx, day, day); err != nil {
				t.Errorf("EnsureFlowDays: %v", err)
				return
			}
			for _, parent := range []string{"flow_minutes", "flow_hours"} {
				if _, err := store.DropFlowDays(ctx, db, parent, day+86400-int64(i%3)*86400); err != nil {
					t.Errorf("DropFlowDays: %v", err)
					return
				}
			}
		}
	})
	wg.Wait()
	_ = db.Close()
}

// crashMinuteFlows is the records of one crash-test minute: more 5-tuples
// than the detail budget, so it writes detail and other rows.
const crashMinuteFlows = 1500

func crashMinute(exp netip.Addr) []record.Flow {
	fs := make([]record.Flow, crashMinuteFlows)
	for i := range fs {
		fs[i] = record.Flow{TS: 1_700_000_000, Exporter: exp, Src: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}),
			Dst: exp, SrcPort: uint16(i), DstPort: 443, Proto: 6, Packets: 1, Octets: uint64(60 + i)}
	}
	return fs
}

func TestSQLiteCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	acked := map[string]string{}
	start := time.Now()
	for round := range crashRounds {
		delay := 50*time.Millisecond + rand.N(350*time.Millisecond)
		n := crashRound(t, path, round, delay, acked)
		verifyAfterCrash(t, path, round, acked)
		t.Logf("round %d: killed after %s, %d writes acknowledged, %d checked", round, delay, n, len(acked))
	}
	flows := 0
	for k := range acked {
		if strings.HasPrefix(k, "flow:") {
			flows++
		}
	}
	if len(acked) == 0 || flows == 0 {
		t.Errorf("%d writes, %d flow minutes acknowledged in all rounds: the test proved nothing", len(acked), flows)
	}
	t.Logf("%d rounds, %d acknowledged keys verified, %s", crashRounds, len(acked), time.Since(start))
}

// crashRound runs one helper, kills it after delay and adds the writes it
// acknowledged to acked. It returns how many it acknowledged.
func crashRound(t *testing.T, path string, round int, delay time.Duration, acked map[string]string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		crashEnvHelper+"=1",
		crashEnvDB+"="+path,
		crashEnvFirstKey+"="+strconv.Itoa(round*10_000_000),
	)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	timer := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
	defer timer.Stop()

	n := 0
	var other strings.Builder // the helper's test output, for failures
	r := bufio.NewReader(stdout)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			// A last line without its newline was cut by the kill:
			// not acknowledged.
			if err != io.EOF {
				t.Fatalf("read helper output: %v", err)
			}
			break
		}
		kv, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), crashAckPrefix)
		if !ok {
			other.WriteString(line)
			continue
		}
		k, v, _ := strings.Cut(kv, " ")
		acked[k] = v
		n++
	}
	err = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("round %d: helper ended with %v before the kill, want SIGKILL; output:\n%s%s", round, err, other.String(), stderr.String())
	}
	return n
}

// verifyAfterCrash reopens the file as the hub would and checks it.
func verifyAfterCrash(t *testing.T, path string, round int, acked map[string]string) {
	t.Helper()
	ctx := t.Context()
	db, err := store.Open(ctx, storetest.Logger(t), store.Config{DSN: path, MaxConns: 2})
	if err != nil {
		t.Fatalf("round %d: reopen after kill: %v", round, err)
	}
	defer db.Close()

	var integrity []string
	rows, err := db.Reader().QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		t.Fatalf("round %d: integrity_check: %v", round, err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		integrity = append(integrity, s)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(integrity, []string{"ok"}); diff != "" {
		t.Fatalf("round %d: integrity_check (-got, +want):\n%s", round, diff)
	}

	// Each flow view names exactly the day tables that exist.
	for _, parent := range []string{"flow_minutes", "flow_hours"} {
		days, err := db.FlowDays(ctx, parent)
		if err != nil {
			t.Fatalf("round %d: list %s days: %v", round, parent, err)
		}
		var view string
		if err := db.Reader().QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'view' AND name = $1`, parent).Scan(&view); err != nil {
			t.Fatalf("round %d: %s view: %v", round, parent, err)
		}
		var tables, named []string
		for _, d := range days {
			tables = append(tables, store.FlowDayTable(parent, d))
		}
		named = regexp.MustCompile(parent+`_d[0-9]{8}`).FindAllString(view, -1)
		if diff := cmp.Diff(named, tables); diff != "" {
			t.Fatalf("round %d: %s view names (-got) other tables than exist (+want):\n%s", round, parent, diff)
		}
	}

	// Every flow minute in the file is whole; every acknowledged one is
	// there.
	got := make(map[string]string, len(acked))
	frows, err := db.Reader().QueryContext(ctx, `SELECT exporter, SUM(flows) FROM flow_minutes GROUP BY exporter, ts`)
	if err != nil {
		t.Fatalf("round %d: read flows: %v", round, err)
	}
	for frows.Next() {
		var exp string
		var flows int64
		if err := frows.Scan(&exp, &flows); err != nil {
			t.Fatal(err)
		}
		if flows != crashMinuteFlows {
			t.Fatalf("round %d: minute of %s holds %d flows, want all %d or none", round, exp, flows, crashMinuteFlows)
		}
		if _, ok := acked["flow:"+exp]; ok {
			got["flow:"+exp] = strconv.Itoa(crashMinuteFlows)
		}
	}
	if err := frows.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err = db.Reader().QueryContext(ctx, `SELECT key, value FROM settings`)
	if err != nil {
		t.Fatalf("round %d: read settings: %v", round, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		if _, ok := acked[k]; ok {
			got[k] = v
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, acked); diff != "" {
		t.Fatalf("round %d: acknowledged writes after the kill (-got, +want):\n%s", round, diff)
	}
}
