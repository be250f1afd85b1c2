package hub

import (
	"context"
	"fmt"
	"testing"
	"time"

	"netmon/app/api"
	"netmon/app/topology"
	"netmon/collectors/snmp/snmptest"
	"netmon/store/storetest"
)

// TestTopologyFromRealLLDP: two lldpd exchange real LLDP frames over a
// veth pair between two namespaces; the A end's lldpd feeds snmpd's
// LLDP-MIB through AgentX; the hub's poller polls that snmpd as a device
// and /api/v1/topology draws the discovered link to the B end, named as
// lldpd announced it, on the veth ports. Root, lldpd and snmpd are
// required (CI=true fails without them).
func TestTopologyFromRealLLDP(t *testing.T) {
	link := snmptest.StartLLDP(t)
	h, boot := bootstrap(t, storetestSQLite(t))
	var dev api.DeviceItem
	boot.call("POST", "/api/v1/devices", map[string]any{"name": "lldp-a", "host": link.Agent.Addr, "community": "public", "poll_seconds": 10}).
		must(t, 200).decode(t, &dev)

	want := fmt.Sprintf("device:%d", dev.ID)
	deadline := time.Now().Add(30 * time.Second)
	var topo topology.Topology
	for time.Now().Before(deadline) {
		boot.call("GET", "/api/v1/topology", nil).must(t, 200).decode(t, &topo)
		if len(topo.Links) > 0 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if len(topo.Links) != 1 {
		d, _ := h.db.Device(context.Background(), dev.ID)
		t.Fatalf("links %+v (device last_error %q, last_poll %d)", topo.Links, d.LastError, d.LastPoll)
	}
	l := topo.Links[0]
	if l.Source != want || l.Target != "neighbor:"+link.HostB || l.Kind != "lldp" || l.Confidence != "discovered" ||
		l.SourcePort != link.PortA || l.TargetPort != link.PortB || l.TS == 0 {
		t.Errorf("link %+v; want %s -> neighbor:%s on %s/%s", l, want, link.HostB, link.PortA, link.PortB)
	}
	var nb *topology.DeviceNode
	for i := range topo.Devices {
		if topo.Devices[i].ID == "neighbor:"+link.HostB {
			nb = &topo.Devices[i]
		}
	}
	if nb == nil || nb.Managed {
		t.Errorf("the B end is not an unmanaged neighbour node: %+v", topo.Devices)
	}
}

var _ = storetest.Each
