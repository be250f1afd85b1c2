package service

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnreachable(t *testing.T) {
	got := Unreachable([]string{"/etc/netmon/agent.yaml", "/home/ops/agent.yaml", "/root/ca.pem", "/tmp/x", "/var/lib/netmon/s.json", "/tmpfoo"})
	want := []string{"/home/ops/agent.yaml", "/root/ca.pem", "/tmp/x"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
}
