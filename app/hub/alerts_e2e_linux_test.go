package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"netmon/store/record"
)

// alertVeth makes a network namespace and a veth pair whose host end
// (returned) has hostIP and routes peerIP into the namespace; removed at
// cleanup. Traffic the host sends to peerIP leaves through the host end:
// the hub capture counts it as out.
func alertVeth(t *testing.T, hostIP, peerIP string) string {
	t.Helper()
	needRoot(t)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	tag := hex.EncodeToString(rnd[:])
	ns, vh, vn := "nmalert-"+tag, "nah"+tag, "nan"+tag
	ip("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ip("link", "add", vh, "type", "veth", "peer", "name", vn, "netns", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", vh).Run() })
	ip("addr", "add", hostIP+"/32", "dev", vh)
	ip("link", "set", vh, "up")
	ip("route", "add", peerIP+"/32", "dev", vh)
	ip("-n", ns, "addr", "add", peerIP+"/32", "dev", vn)
	ip("-n", ns, "link", "set", vn, "up")
	ip("-n", ns, "route", "add", hostIP+"/32", "dev", vn)
	return vh
}

// TestBandwidthAlertFromTraffic: real traffic captured by the hub on a
// veth fires the bw rule through the real path (capture snapshot →
// engine → store → API and the tick's buffer); the repeats while it lasts
// increment count on the one row.
func TestBandwidthAlertFromTraffic(t *testing.T) {
	const hostIP, peerIP = "203.0.113.61", "198.51.100.61"
	vh := alertVeth(t, hostIP, peerIP)
	h, c := bootstrap(t, storetestSQLite(t))
	c.call("PUT", "/api/alerts", `{"bandwidth":{"enabled":true,"in_mbps":1000,"out_mbps":1,"seconds":2}}`).must(t, 200)
	c.call("POST", "/api/capture/start", map[string]string{"device": vh}).must(t, 200)

	// About 10 Mbit/s out until the event has repeated a few times.
	conn, err := net.Dial("udp4", peerIP+":9")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		payload := make([]byte, 1200)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			<-tick.C
			_, _ = conn.Write(payload)
		}
	}()
	var page struct {
		Events []record.AlertEvent `json:"events"`
	}
	for {
		c.call("GET", "/api/v1/alerts/events?kind=bw", nil).must(t, 200).decode(t, &page)
		if len(page.Events) == 1 && page.Events[0].Count >= 3 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no bw event repeating within 20 s: %+v", page.Events)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	e := page.Events[0]
	if e.Key != "hub|out" || e.Severity != 5 || e.State != "firing" || !strings.HasPrefix(e.Message, "bandwidth out ") {
		t.Errorf("event: %+v", e)
	}
	if got := h.alerts.Drain(); len(got) != 1 || got[0].ID != e.ID {
		t.Errorf("tick buffer: %+v", got)
	}
}
