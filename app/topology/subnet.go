package topology

import (
	"encoding/json"
	"net/netip"
	"strconv"

	"netmon/store"
)

// Agent-to-device links inferred from subnets: an agent reports its
// interfaces' addresses in CIDR with its counters (wire.Interface.Addrs);
// a device whose address lies in one of those networks shares a segment
// with the agent. Only agents with no other link get one (an LLDP, ARP
// or manual link says more), and one only: to the device of the most
// specific network, then the most access-like kind (a switch or access
// point before a router, a router before a firewall), then the lowest id.
// The link is as fresh as the agent's last report and goes with it after
// EdgeTTL.

// kindRank orders the devices an agent most likely hangs off.
var kindRank = map[string]int{"switch": 0, "access-point": 1, "wireless-controller": 2, "router": 3, "firewall": 4, "load-balancer": 5}

func rankOf(kind string) int {
	if r, ok := kindRank[kind]; ok {
		return r
	}
	return 9
}

// agentPrefixes reads the networks of an agent's stored interface list.
func agentPrefixes(counters string) []netip.Prefix {
	var ifs []struct {
		Addrs []string `json:"addrs"`
	}
	if counters == "" || json.Unmarshal([]byte(counters), &ifs) != nil {
		return nil
	}
	var out []netip.Prefix
	for _, f := range ifs {
		for _, a := range f.Addrs {
			p, err := netip.ParsePrefix(a)
			if err != nil || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast() {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// subnetLink returns the inferred link of one agent, or false.
func subnetLink(a store.TopoAgent, devs []store.Device) (Link, bool) {
	prefixes := agentPrefixes(a.Counters)
	if len(prefixes) == 0 {
		return Link{}, false
	}
	var best *store.Device
	bestBits := -1
	for i := range devs {
		d := &devs[i]
		addr, err := netip.ParseAddr(hostOnly(d.Host))
		if err != nil {
			continue
		}
		addr = addr.Unmap()
		for _, p := range prefixes {
			if !p.Contains(addr) || p.Addr() == addr {
				continue // not on that network, or the agent's own address
			}
			bits := p.Bits()
			if best == nil || bits > bestBits || (bits == bestBits && (rankOf(d.Kind) < rankOf(best.Kind) ||
				(rankOf(d.Kind) == rankOf(best.Kind) && d.ID < best.ID))) {
				best, bestBits = d, bits
			}
		}
	}
	if best == nil {
		return Link{}, false
	}
	return Link{Source: "agent:" + strconv.FormatInt(a.ID, 10), Target: "device:" + strconv.FormatInt(best.ID, 10),
		Kind: "subnet", Confidence: "inferred", Status: "unknown", TS: a.LastSeen}, true
}
