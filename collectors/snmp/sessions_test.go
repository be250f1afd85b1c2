package snmp

import (
	"context"
	"testing"

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
	p := New(testConfig(), Deps{})
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

// TestSessionKeptAcrossPolls: a device's Session keeps its gosnmp
// session between polls; another v3 user opens another (the replaced
// one's socket is closed), and Close closes the last.
func TestSessionKeptAcrossPolls(t *testing.T) {
	agent := snmptest.Start(t)
	dev := record.Device{ID: 1, Host: agent.Addr, SNMPVersion: "3", V3User: "u1", V3AuthProto: "SHA", V3AuthPass: snmptest.AuthPass,
		V3PrivProto: "AES", V3PrivPass: snmptest.PrivPass, PollSeconds: 60, Enabled: true}
	s := New(testConfig(), Deps{}).Open()
	ctx := context.Background()
	if p, err := s.Poll(ctx, dev); err != nil || p.Err != "" || p.DeviceID != 1 || len(p.Ifaces) == 0 {
		t.Fatalf("first poll: %v, %+v", err, p)
	}
	g := s.sess.g
	if g == nil || g.Conn == nil {
		t.Fatal("no session kept after a poll")
	}
	if _, err := s.Poll(ctx, dev); err != nil || s.sess.g != g {
		t.Fatalf("second poll: %v, session %p (first %p)", err, s.sess.g, g)
	}
	conn := g.Conn
	dev.V3User, dev.V3AuthProto, dev.V3PrivProto = "u2", "SHA256", "AES256"
	if _, err := s.Poll(ctx, dev); err != nil || s.sess.g == nil || s.sess.g == g || s.sess.dev.V3User != "u2" {
		t.Fatalf("another user: %v, session %p (was %p)", err, s.sess.g, g)
	}
	if _, err := conn.Write([]byte{0}); err == nil {
		t.Fatal("the replaced session's socket still sends")
	}
	conn = s.sess.g.Conn
	s.Close()
	if _, err := conn.Write([]byte{0}); err == nil || s.sess.g != nil {
		t.Fatalf("closed session: write error %v, session %p", err, s.sess.g)
	}
}
