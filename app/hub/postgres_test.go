package hub

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"netmon/app/config"
)

// privatePostgres is a PostgreSQL server of the test's own, in a temp
// directory on a free port, so the test can stop and start it without
// disturbing the shared server other tests use.
type privatePostgres struct {
	t      *testing.T
	dir    string
	port   int
	pgctl  string
	asUser []string // runuser prefix when running as root
}

func findPGBin(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1]
	}
	return ""
}

func newPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	initdb, pgctl := findPGBin("initdb"), findPGBin("pg_ctl")
	if initdb == "" || pgctl == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("initdb/pg_ctl not found: CI must install postgresql")
		}
		t.Skip("initdb/pg_ctl not installed; this test starts a private PostgreSQL")
	}
	pg := &privatePostgres{t: t, pgctl: pgctl}
	parent := t.TempDir()
	pg.dir = filepath.Join(parent, "pgdata")
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(pg.dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(pg.dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		pg.asUser = []string{"runuser", "-u", "postgres", "--"}
		// The temp dir's parents must be traversable by postgres.
		for d := filepath.Dir(parent); d != "/" && d != "."; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o001 == 0 {
				_ = os.Chmod(d, st.Mode().Perm()|0o001)
			}
		}
	}
	pg.run(initdb, "-D", pg.dir, "-U", "postgres", "-A", "trust", "--no-sync")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pg.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pg.start()
	t.Cleanup(func() {
		_ = pg.cmd(pg.pgctl, "-D", pg.dir, "-m", "immediate", "stop").Run()
	})
	return pg
}

func (pg *privatePostgres) cmd(args ...string) *exec.Cmd {
	full := append(append([]string{}, pg.asUser...), args...)
	return exec.Command(full[0], full[1:]...)
}

func (pg *privatePostgres) run(args ...string) {
	pg.t.Helper()
	if out, err := pg.cmd(args...).CombinedOutput(); err != nil {
		pg.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (pg *privatePostgres) start() {
	pg.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", pg.port, pg.dir)
	pg.run(pg.pgctl, "-D", pg.dir, "-o", opts, "-l", filepath.Join(pg.dir, "server.log"), "-w", "-t", "30", "start")
}

func (pg *privatePostgres) stop() {
	pg.t.Helper()
	pg.run(pg.pgctl, "-D", pg.dir, "-m", "fast", "-w", "stop")
}

func (pg *privatePostgres) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", pg.port)
}

// waitStatus polls url until it answers want or the timeout passes.
func waitStatus(t *testing.T, url string, want int, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var last int
	var body string
	for time.Since(start) < timeout {
		last, _, body = get(t, url)
		if last == want {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s stayed %d (%s), want %d within %v", url, last, body, want, timeout)
	return 0
}

// TestPostgresDownAndBack is the database half of RELIABILITY case 13 and
// the "done when": the hub starts and migrates on PostgreSQL,
// /readyz turns 503 while the server is stopped (the hub keeps serving),
// and 200 again once it is back, without a restart.
func TestPostgresDownAndBack(t *testing.T) {
	pg := newPrivatePostgres(t)
	cfg := config.DefaultHubConfig()
	cfg.Store.DSN = pg.dsn()
	h := startHub(t, cfg)
	u := base(h)

	waitStatus(t, u+"/readyz", 200, 5*time.Second)
	pg.stop()
	took := waitStatus(t, u+"/readyz", 503, 10*time.Second)
	t.Logf("readyz 503 %v after PostgreSQL stopped", took.Round(time.Millisecond))
	if code, _, _ := get(t, u+"/healthz"); code != 200 {
		t.Fatalf("hub stopped serving while the database is down: healthz %d", code)
	}
	pg.start()
	took = waitStatus(t, u+"/readyz", 200, 15*time.Second)
	t.Logf("readyz 200 %v after PostgreSQL restarted", took.Round(time.Millisecond))
	// And again: recovery is not a one-off.
	pg.stop()
	waitStatus(t, u+"/readyz", 503, 10*time.Second)
	pg.start()
	waitStatus(t, u+"/readyz", 200, 15*time.Second)
}
