package hub

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"netmon/app/config"
	"netmon/store"
)

// TestIOCFromCapturedDNS: real DNS queries sent through a veth the hub
// captures reach the ioc rule through the hub capture's DNS domains; the
// subdomain matches its listed parent; exactly one event, keyed 0|<name>.
func TestIOCFromCapturedDNS(t *testing.T) {
	const hostIP, peerIP = "203.0.113.71", "198.51.100.71"
	vh := alertVeth(t, hostIP, peerIP)
	list := filepath.Join(t.TempDir(), "ioc.txt")
	if err := os.WriteFile(list, []byte("||evil-capture.test^\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, c := bootstrap(t, storetestSQLite(t), func(cfg *config.HubConfig) {
		cfg.Alerts.Enabled = false // the test runs the 30-second cycle
		cfg.Threat.IOCFile = list
	})
	c.call("PUT", "/api/alerts", `{"ioc":{"enabled":true}}`).must(t, 200)
	c.call("POST", "/api/capture/start", map[string]string{"device": vh}).must(t, 200)

	query := func(id uint16, name string) []byte {
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, RecursionDesired: true})
		b.EnableCompression()
		if err := b.StartQuestions(); err != nil {
			t.Fatal(err)
		}
		if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}); err != nil {
			t.Fatal(err)
		}
		msg, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	// Unconnected: nothing answers in the namespace, and the port
	// unreachable it sends back must not fail the next write.
	conn, err := net.ListenPacket("udp4", hostIP+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dst := &net.UDPAddr{IP: net.ParseIP(peerIP), Port: 53}
	for i, name := range []string{"cdn.evil-capture.test.", "clean-capture.example."} {
		if _, err := conn.WriteTo(query(uint16(100+i), name), dst); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "both names in the capture's domains", func() bool {
		n := 0
		for _, d := range h.capture.Snapshot().TopDomains {
			if d.Domain == "cdn.evil-capture.test" || d.Domain == "clean-capture.example" {
				n++
			}
		}
		return n == 2
	})
	ctx := context.Background()
	h.alerts.EvalIOC(ctx)
	h.alerts.EvalIOC(ctx) // the same reports: nothing new
	evs, err := h.db.ListAlertEvents(ctx, store.AlertFilter{Kind: "ioc"})
	if err != nil {
		t.Fatal(err)
	}
	want := `the hub capture saw DNS name "cdn.evil-capture.test": listed as evil-capture.test in ` + list + ` line 1`
	if len(evs) != 1 || evs[0].Key != "0|evil-capture.test" || evs[0].Message != want || evs[0].Count != 1 || evs[0].AgentID != 0 {
		t.Fatalf("events: %+v", evs)
	}
}
