package hub

import (
	"fmt"
	"strings"
	"testing"

	"netmon/agentmode/wire"
)

// TestTelemetryConnectionLimit: a batch of 20 001 connections gets the
// 413 limit message (it got "field connections must be an object"), one
// of 20 000 is taken — on the fast path (well-formed connections) and on
// the repairing one (an unknown field in each).
func TestTelemetryConnectionLimit(t *testing.T) {
	h, _ := fleetHub(t, storetestSQLite(t), nil)
	agent := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "big", MachineID: "m-big"}))
	batch := func(n int, extra string) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"ts":%d,"seq":%d,"interfaces":[],"connections":[`, 0, n+len(extra))
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"proto":"tcp","local_addr":"10.0.0.1:%d","remote_addr":"203.0.113.9:443","status":"ESTABLISHED","pid":42,"process":"curl"%s}`, i%65536, extra)
		}
		b.WriteString(`]}`)
		return b.String()
	}
	const want = `{"error":"a batch carries at most 512 interfaces and 20000 connections"}`
	for _, extra := range []string{"", `,"junk":1`} {
		r := telemetry(t, h, agent.AgentToken, batch(20001, extra))
		if r.code != 413 || r.body != want {
			t.Errorf("20 001 connections (extra %q): %d %s, want 413 %s", extra, r.code, r.body, want)
		}
		telemetry(t, h, agent.AgentToken, batch(20000, extra)).must(t, 200)
	}
}
