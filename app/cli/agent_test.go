package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAgentHelpExplainsEveryFlag(t *testing.T) {
	for _, args := range [][]string{{"agent", "--help"}, {"agent", "-help"}} {
		code, out, _ := run(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		for _, want := range []string{"--hub-url", "--hub-token", "--enroll-token", "--hub-ca", "--name", "--site", "--state",
			"--collect-method", "--pcap-interface", "--pcap", "--config", "--log-format", "--log-level",
			"NETMON_HUB__URL", "NETMON_HUB__TOKEN", "deprecated", "trust", "queue.jsonl", "install"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v does not mention %s", args, want)
			}
		}
	}
	code, out, _ := run("agent", "install", "-help")
	if code != 0 || !strings.Contains(out, "--dry-run") || !strings.Contains(out, "--hub-url") {
		t.Errorf("agent install --help: exit %d\n%s", code, out)
	}
}

func TestNormalizeAgentFlags(t *testing.T) {
	root := NewRoot(&bytes.Buffer{}, &bytes.Buffer{})
	in := []string{"agent", "-hub-url", "https://h", "-hub-token=x", "-collect-method", "off", "-pcap", "-name", "n", "-hub-ca", "ca.pem"}
	want := []string{"agent", "--hub-url", "https://h", "--hub-token=x", "--collect-method", "off", "--pcap", "--name", "n", "--hub-ca", "ca.pem"}
	if diff := cmp.Diff(NormalizeArgs(root, in), want); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
}

func TestAgentRefusesBadSettings(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "s.json")
	tests := []struct {
		desc    string
		args    []string
		wantErr string
	}{
		{"empty token", []string{"agent", "-hub-url", "http://127.0.0.1:1", "-state", state}, "hub.token"},
		{"whitespace token", []string{"agent", "-hub-url", "http://127.0.0.1:1", "-hub-token", "   ", "-state", state}, "an enroll token is needed"},
		{"no hub url", []string{"agent", "-hub-token", "t", "-state", state}, "hub.url"},
		{"bad collect method", []string{"agent", "-hub-url", "http://h", "-hub-token", "t", "-collect-method", "magic", "-state", state}, "collect.method"},
		{"corrupt state file", []string{"agent", "-hub-url", "http://h", "-state", filepath.Join(dir, "bad.json")}, "corrupt"},
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			code, _, stderr := run(tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.wantErr) {
				t.Fatalf("exit %d, stderr %q, want 2 and %q", code, stderr, tt.wantErr)
			}
		})
	}
}

// TestAgentRunsAndStops runs the agent against an address where no hub
// listens: it starts, logs the deprecated -pcap, fails to enroll, and
// stops when its context ends, keeping the batches it took.
func TestAgentRunsAndStops(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "netmon-agent.state.json")
	// Stopped once the first batch is taken (the state file's next_seq
	// moves on), not after a fixed time: collecting the inventory can
	// take longer than any fixed window on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errb syncBuffer
	go func() {
		for ctx.Err() == nil {
			raw, err := os.ReadFile(state)
			if err == nil && strings.Contains(string(raw), `"next_seq": 2`) && strings.Contains(errb.String(), "enrollment failed") {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	code := Run(ctx, []string{"agent", "-hub-url", "http://127.0.0.1:1", "-hub-token", "ent_x", "-state", state,
		"-pcap", "-log-format", "json", "-name", "cli-test"}, strings.NewReader(""), &out, &errb)
	logs := errb.String()
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, logs)
	}
	for _, want := range []string{`"component":"agent"`, "deprecated setting ignored", "agent started", `"name":"cli-test"`, "enrollment failed", "agent stopped"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	if fi, err := os.Stat(state); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Errorf("state file: %v", err)
	}
	raw, err := os.ReadFile(state + ".queue.jsonl")
	if err != nil || !strings.Contains(string(raw), `"seq":1`) {
		t.Errorf("queue after stop: %v %q", err, raw)
	}
}

func TestAgentInstallDryRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("systemd unit")
	}
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(cfgFile, []byte("hub:\n  url: https://hub.example:8080\n  token: ent_secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, []byte("-"), 0o600); err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	relCA, err := filepath.Rel(cwd, caFile) // made absolute for the service
	if err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run("agent", "install", "-dry-run", "-config", cfgFile, "-site", "paris", "-hub-ca", relCA, "-state", filepath.Join(dir, "st", "a.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"ExecStart=",
		" agent --state " + filepath.Join(dir, "st", "a.json") + " --config " + cfgFile + " --hub-ca=" + caFile + " --site=paris\n",
		"WorkingDirectory=" + filepath.Join(dir, "st") + "\n",
		"ReadWritePaths=" + filepath.Join(dir, "st") + "\n",
		"AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN\n",
		"CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN\n",
		"NoNewPrivileges=yes\n", "ProtectSystem=strict\n", "ProtectHome=yes\n", "PrivateTmp=yes\n",
		"Restart=on-failure\n", "RestartSec=5\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("unit lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ent_secret") {
		t.Error("the enroll token leaked into the unit")
	}
	if _, err := os.Stat(filepath.Join(dir, "st")); err == nil {
		t.Error("dry run created the state directory")
	}
}

func TestAgentInstallRefusals(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		desc    string
		args    []string
		wantErr string
	}{
		{"token flag", []string{"agent", "install", "-dry-run", "-hub-url", "https://h", "-hub-token", "ent_x", "-state", filepath.Join(dir, "s.json")}, "does not take the enroll token"},
		{"no token anywhere", []string{"agent", "install", "-dry-run", "-hub-url", "https://h", "-state", filepath.Join(dir, "s.json")}, "no enroll token"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			code, _, stderr := run(tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.wantErr) {
				t.Fatalf("exit %d stderr %q, want 2 and %q", code, stderr, tt.wantErr)
			}
		})
	}
}

// TestAgentInstallHelpListsWhatItTakes: install's --help shows no flag it
// refuses (the enroll token) or ignores (-pcap).
func TestAgentInstallHelpListsWhatItTakes(t *testing.T) {
	code, out, _ := run("agent", "install", "--help")
	if code != 0 || !strings.Contains(out, "--dry-run") || !strings.Contains(out, "--hub-url") {
		t.Fatalf("help: %d %s", code, out)
	}
	for _, f := range []string{"--hub-token", "--enroll-token", "--pcap "} {
		if strings.Contains(out, f) {
			t.Errorf("install --help lists %s", f)
		}
	}
}
