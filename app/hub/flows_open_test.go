package hub

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"netmon/app/config"
	"netmon/store/storetest"
)

// flowV5Pcap holds softflowd's NetFlow v5 export of flowPcap (its IPv4
// flows), as received on a UDP socket (testdata/flows/netflow/README.md).
const flowV5Pcap = "../../testdata/flows/netflow/softflowd-v5.pcap"

// pcapPayloads returns the UDP payloads of a pcap: the datagrams as the
// exporter sent them.
func pcapPayloads(t *testing.T, file string) [][]byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		if u, ok := p.TransportLayer().(*layers.UDP); ok && len(u.Payload) > 0 {
			out = append(out, append([]byte(nil), u.Payload...))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no datagram in %s", file)
	}
	return out
}

// sendFrom sends the datagrams to the hub's flow port from a loopback
// source address of the caller's choice (the exporter the hub sees).
func sendFrom(t *testing.T, src string, port int, ds [][]byte) {
	t.Helper()
	conn, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP(src)}, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, d := range ds {
		if _, err := conn.Write(d); err != nil {
			t.Fatal(err)
		}
	}
}

// flowTotals are the sums of an answer's rows, the remainder row included.
type flowTotals struct{ Packets, Octets, Flows int64 }

func (c *client) flowTotals(t *testing.T, path string) flowTotals {
	t.Helper()
	var rows []struct {
		Packets, Octets, Flows int64
	}
	c.call("GET", path, nil).must(t, 200).decode(t, &rows)
	var s flowTotals
	for _, r := range rows {
		s.Packets += r.Packets
		s.Octets += r.Octets
		s.Flows += r.Flows
	}
	return s
}

// TestFlowsVisibleInOpenMinute: real NetFlow v5 datagrams (softflowd's)
// sent over UDP to a hub show in GET /api/v1/flows and in the
// conversations with their exact packets and octets while their minute is
// still open, not when it closes (issue 28): the minutes here are held
// open for ten minutes, so on the old code nothing shows before the
// deadline. When the minute is then written the answers are the same
// numbers, not doubled, and the table holds them once. A site-bound
// caller sees its site's exporter's open minute and not another site's.
func TestFlowsVisibleInOpenMinute(t *testing.T) {
	ds := pcapPayloads(t, flowV5Pcap)
	wantPackets, wantOctets, _ := pcapTotals(t, flowPcap, true)
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		port := freeUDPPort(t)
		h, admin := bootstrap(t, dsn, func(c *config.HubConfig) {
			c.Flows.Addr = fmt.Sprintf("127.0.0.1:%d", port)
			c.Auth.MultiSite = true
			// No minute closes by itself during the test: what the API
			// shows before the Flush below comes from the open minute.
			c.Queue.Flows.Grace = 10 * time.Minute
		})
		admin.call("POST", "/api/v1/devices", map[string]any{"name": "edge-a", "host": "127.0.0.1", "site": "a"}).must(t, 200)
		admin.call("POST", "/api/v1/devices", map[string]any{"name": "edge-b", "host": "127.0.0.2", "site": "b"}).must(t, 200)
		admin.createUser("viewer-a", "viewer-a-secret", "viewer", "a")
		siteA := h.client(t)
		siteA.login("viewer-a", "viewer-a-secret")

		paths := []string{
			"/api/v1/flows?minutes=15&limit=1000",
			"/api/v1/flows/conversations?window=15m&limit=1000",
			"/api/v1/flows/conversations?window=1h&by=pair&limit=1000",
			"/api/v1/flows/conversations?window=24h&limit=1000",
		}
		one := flowTotals{wantPackets, wantOctets, 0}
		sendFrom(t, "127.0.0.1", port, ds)
		sendFrom(t, "127.0.0.2", port, ds)
		// (a) Visible within seconds: poll with a generous deadline
		// (a loaded machine), far below the ten minutes the minute stays
		// open.
		deadline := time.Now().Add(20 * time.Second)
		var got flowTotals
		for {
			got = admin.flowTotals(t, paths[0])
			if got.Packets >= 2*wantPackets || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if got.Packets != 2*wantPackets || got.Octets != 2*wantOctets {
			t.Fatalf("open minute: /api/v1/flows sums %d packets / %d octets, want %d / %d (two exporters)", got.Packets, got.Octets, 2*wantPackets, 2*wantOctets)
		}
		one.Flows = got.Flows / 2
		if stored, _, _ := storedFlows(t, h); stored != 0 {
			t.Fatalf("%d packets stored already: the test meant to read an open minute", stored)
		}
		check := func(when string) {
			t.Helper()
			for _, p := range paths {
				if got := admin.flowTotals(t, p); got != (flowTotals{2 * one.Packets, 2 * one.Octets, 2 * one.Flows}) {
					t.Errorf("%s: admin %s sums %+v, want twice %+v", when, p, got, one)
				}
				// (c) The site-bound viewer: its exporter only.
				if got := siteA.flowTotals(t, p); got != one {
					t.Errorf("%s: site a %s sums %+v, want %+v (its exporter's only)", when, p, got, one)
				}
			}
		}
		check("open minute")
		// (b) The minute closes and is written: the same numbers.
		h.queue.Flush()
		if packets, octets, _ := storedFlows(t, h); packets != 2*wantPackets || octets != 2*wantOctets {
			t.Fatalf("stored %d packets / %d octets, want %d / %d", packets, octets, 2*wantPackets, 2*wantOctets)
		}
		check("written")
	})
}
