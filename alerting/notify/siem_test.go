package notify

import (
	"net"
	"strings"
	"testing"
	"time"

	"netmon/alerting/siem"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestSIEMChannel: an event routed to the SIEM channel arrives as one
// RFC 3164 datagram carrying the CEF line (the rsyslog and tshark tests
// of alerting/siem check the wire in depth).
func TestSIEMChannel(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	db := storetest.OpenSQLite(t)
	box := newBox(Settings{SIEM: SIEM{Enabled: true, Target: pc.LocalAddr().String()}})
	n, _ := startNotifier(t, db, testConfig(), box, Deps{})
	n.Offer(portEvent)
	_ = pc.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	k, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	cef, _ := siem.Format("", portEvent)
	got := string(buf[:k])
	if !strings.HasPrefix(got, "<130>") || !strings.HasSuffix(got, " hub1 netmon: "+cef) {
		t.Errorf("datagram %q, want <130>... hub1 netmon: %s", got, cef)
	}
	waitDeliveries(t, db, record.DeliveryDelivered, 1, 5*time.Second)
}
