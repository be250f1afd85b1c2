package natsq_test

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"netmon/store/queue/natsq"
)

// TestCheckServerVersion: versions as servers report them in INFO.
func TestCheckServerVersion(t *testing.T) {
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"2.15.2", true},
		{"2.10.0", true},
		{"2.10.29", true},
		{"v2.11.4", true},
		{"3.0.0", true},
		{"2.12.0-RC.2", true},
		{"2.9.10", false}, // Debian 12
		{"2.9.25", false},
		{"2.10.0-beta.1", false},
		{"1.4.1", false},
		{"", false},
		{"2.10", false},
		{"two.ten.zero", false},
	} {
		err := natsq.CheckServerVersion(c.v)
		if (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok=%v", c.v, err, c.ok)
		}
	}
	want := "nats-server 2.9.10 is too old: netmon's JetStream ingest needs nats-server 2.10.0 or newer (upgrade the server, or run without -nats to use the in-process queue)"
	if err := natsq.CheckServerVersion("2.9.10"); err == nil || err.Error() != want {
		t.Errorf("message %v", err)
	}
}

// TestNewRefusesOldServer connects to the machine's Debian nats-server
// (2.9.10 at 127.0.0.1:4222, or NETMON_TEST_NATS_OLD_ADDR's host:port;
// make deps installs it, .ci/run starts it): a missing peer fails the
// test, as the PostgreSQL one does. When the server there is new enough,
// New's refusal cannot be shown and the test only checks that INFO and
// CheckServerVersion agree (it creates nothing on a shared server).
func TestNewRefusesOldServer(t *testing.T) {
	addr := "127.0.0.1:4222"
	if a := os.Getenv("NETMON_TEST_NATS_OLD_ADDR"); a != "" {
		addr = a
	}
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("the old nats-server peer at %s: %v (install it with make deps and start it: nats-server -a 127.0.0.1 -p 4222 -js, as .ci/run does)", addr, err)
	}
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("INFO from %s: %q %v", addr, line, err)
	}
	var info struct{ Version string }
	if err := json.Unmarshal([]byte(line[5:]), &info); err != nil {
		t.Fatal(err)
	}
	if natsq.CheckServerVersion(info.Version) == nil {
		t.Logf("nats-server at %s is %s, new enough: nothing to refuse", addr, info.Version)
		return
	}
	q, err := natsq.New(slog.New(slog.DiscardHandler), natsq.Config{URL: "nats://" + addr}, newFakeWriter(), nil)
	if err == nil {
		q.Stop()
		t.Fatalf("New accepted nats-server %s", info.Version)
	}
	if want := "nats-server " + info.Version + " is too old"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q, want it to start with %q", err, want)
	}
}
