package snmp

import (
	"context"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"netmon/collectors/snmp/snmptest"
	"netmon/store/record"
)

// TestSessionKept: polls of one device reuse its session (same socket,
// no new v3 discovery); changed credentials open a new one; a v3 agent
// that restarted (engine boots moved on) is polled at once on a fresh
// session instead of failing; a failed poll drops the session.
func TestSessionKept(t *testing.T) {
	agent := snmptest.Start(t)
	p := New(nil, testConfig(), Deps{})
	for _, d := range []record.Device{
		{ID: 1, Host: agent.Addr, SNMPVersion: "2c", Community: "public"},
		{ID: 2, Host: agent.Addr, SNMPVersion: "3", V3User: "u1", V3AuthProto: "SHA", V3AuthPass: snmptest.AuthPass, V3PrivProto: "AES", V3PrivPass: snmptest.PrivPass},
	} {
		t.Run("v"+d.SNMPVersion, func(t *testing.T) {
			var sess devSession
			var cache ifCache
			defer sess.close()
			first, err := p.pollRaw(context.Background(), d, false, &cache, &sess)
			if err != nil {
				t.Fatal(err)
			}
			g, local := sess.g, sess.g.Conn.LocalAddr().String()
			sent := 0
			g.OnSent = func(*gosnmp.GoSNMP) { sent++ }
			second, err := p.pollRaw(context.Background(), d, false, &cache, &sess)
			if err != nil {
				t.Fatal(err)
			}
			if sess.g != g || sess.g.Conn.LocalAddr().String() != local {
				t.Fatalf("second poll: session %p socket %s, want the first's %p %s", sess.g, sess.g.Conn.LocalAddr(), g, local)
			}
			// Only the poll's own requests went out: no v3 discovery, no
			// retry.
			if sent != second.requests || len(second.ifaces) != len(first.ifaces) || len(first.ifaces) == 0 {
				t.Fatalf("%d packets sent for %d requests; interfaces %d then %d", sent, second.requests, len(first.ifaces), len(second.ifaces))
			}
			if d.SNMPVersion == "3" {
				agent.Restart(t)
				third, err := p.pollRaw(context.Background(), d, false, &cache, &sess)
				if err != nil {
					t.Fatalf("after the agent's restart: %v", err)
				}
				if sess.g == g || len(third.ifaces) != len(first.ifaces) {
					t.Fatalf("after the restart: session reused %v, %d interfaces (want a fresh session, %d)", sess.g == g, len(third.ifaces), len(first.ifaces))
				}
				g = sess.g
			}
			other := d
			other.Community, other.V3PrivPass = "wrong", "wrongpass9"
			if _, err := p.pollRaw(context.Background(), other, false, &cache, &sess); err == nil {
				t.Fatal("wrong credentials answered")
			}
			if sess.g != nil {
				t.Fatalf("a failed poll kept its session %p (was %p)", sess.g, g)
			}
		})
	}
}

// TestSessionClosedWithDevice: the poller's scheduled polls keep the
// device's session; another v3 user opens another, a deleted device's is
// closed (its socket refuses to send).
func TestSessionClosedWithDevice(t *testing.T) {
	agent := snmptest.Start(t)
	dev := record.Device{ID: 1, Host: agent.Addr, SNMPVersion: "3", V3User: "u1", V3AuthProto: "SHA", V3AuthPass: snmptest.AuthPass,
		V3PrivProto: "AES", V3PrivPass: snmptest.PrivPass, PollSeconds: 60, Enabled: true}
	ms := &memStore{devs: []record.Device{dev}}
	p := New(nil, testConfig(), Deps{Targets: ms, Writer: ms})
	ctx := context.Background()
	poll := func() *devState {
		t.Helper()
		if err := p.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		st := p.devices[1]
		st.next = time.Time{}
		if due := p.due(); len(due) != 1 || due[0] != st {
			t.Fatalf("due = %v", due)
		}
		p.pollDevice(ctx, st)
		return st
	}
	st := poll()
	g := st.sess.g
	if g == nil || g.Conn == nil || st.failures != 0 {
		t.Fatalf("after a poll: session %v, failures %d", g, st.failures)
	}
	if poll(); st.sess.g != g || len(ms.pollsOf(1)) != 2 || ms.pollsOf(1)[1].Err != "" {
		t.Fatalf("second poll: session %p (first %p), polls %+v", st.sess.g, g, ms.pollsOf(1))
	}
	ms.mu.Lock()
	ms.devs[0].V3User, ms.devs[0].V3AuthProto, ms.devs[0].V3PrivProto = "u2", "SHA256", "AES256"
	ms.mu.Unlock()
	conn := g.Conn
	if poll(); st.sess.g == nil || st.sess.g == g || st.sess.dev.V3User != "u2" || ms.pollsOf(1)[2].Err != "" {
		t.Fatalf("another user: session %p (was %p) for %q, poll %+v", st.sess.g, g, st.sess.dev.V3User, ms.pollsOf(1)[2])
	}
	if _, err := conn.Write([]byte{0}); err == nil {
		t.Fatal("the replaced session's socket still sends")
	}
	conn = st.sess.g.Conn
	ms.mu.Lock()
	ms.devs = nil
	ms.mu.Unlock()
	if err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte{0}); err == nil || st.sess.g != nil || len(p.devices) != 0 {
		t.Fatalf("deleted device: write error %v, session %p, %d devices", err, st.sess.g, len(p.devices))
	}
}
