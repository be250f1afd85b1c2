package snmp

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gosnmp/gosnmp"

	"netmon/store/record"
)

// readNeighbors walks LLDP-MIB (lldpRemTable, lldpRemManAddrTable,
// lldpLocPortTable), CISCO-CDP-MIB's cdpCacheTable and IP-MIB's
// ipNetToMediaTable. A device without one of them just has no rows.
func readNeighbors(g *gosnmp.GoSNMP, cfg Config, ifs []rawIface) ([]record.Neighbor, int, int, error) {
	ifName := map[string]string{}
	for _, f := range ifs {
		ifName[strconv.Itoa(f.sample.IfIndex)] = f.sample.Name
	}
	var out []record.Neighbor
	requests, varbinds := 0, 0
	walk := func(maxRows int, oids ...string) ([]*column, error) {
		cols, n, err := walkColumns(g, cfg.BulkVarbinds, maxRows, oids...)
		requests += n
		for _, c := range cols {
			varbinds += len(c.rows)
		}
		return cols, err
	}

	// LLDP: rows indexed <timeMark>.<localPortNum>.<remIndex>.
	lldp, err := walk(1024, oidLldpLocPortID, oidLldpRemEntry+"7", oidLldpRemEntry+"9", oidLldpRemManAddr)
	if err != nil {
		return nil, requests, varbinds, err
	}
	locPort := map[string]string{}
	for idx, v := range lldp[0].rows {
		locPort[idx] = str(v)
	}
	manAddr := map[string]string{} // "<tm>.<port>.<idx>" -> address
	for idx := range lldp[3].rows {
		parts := strings.Split(idx, ".")
		// <tm>.<port>.<idx>.<subtype>.<len>.<bytes...>
		if len(parts) >= 9 && parts[3] == "1" && parts[4] == "4" {
			manAddr[strings.Join(parts[:3], ".")] = strings.Join(parts[5:9], ".")
		}
	}
	for idx, v := range lldp[2].rows {
		parts := strings.Split(idx, ".")
		if len(parts) != 3 {
			continue
		}
		local := locPort[parts[1]]
		if local == "" {
			local = ifName[parts[1]] // many agents number LLDP ports by ifIndex
		}
		out = append(out, record.Neighbor{Source: "lldp", LocalPort: local, RemoteName: str(v),
			RemotePort: str(lldp[1].rows[idx]), RemoteAddr: manAddr[idx]})
	}

	// CDP: rows indexed <ifIndex>.<deviceIndex>.
	cdp, err := walk(1024, oidCdpCacheEntry+"4", oidCdpCacheEntry+"6", oidCdpCacheEntry+"7")
	if err != nil {
		return nil, requests, varbinds, err
	}
	for idx, v := range cdp[1].rows {
		ifIdx, _, _ := strings.Cut(idx, ".")
		n := record.Neighbor{Source: "cdp", LocalPort: ifName[ifIdx], RemoteName: str(v), RemotePort: str(cdp[2].rows[idx])}
		if b, ok := cdp[0].rows[idx].Value.([]byte); ok && len(b) == 4 {
			n.RemoteAddr = netip.AddrFrom4([4]byte(b)).String()
		}
		out = append(out, n)
	}

	// ARP: ipNetToMediaPhysAddress indexed <ifIndex>.<a.b.c.d>.
	arp, err := walk(cfg.MaxARP, oidIPNetToMedia)
	if err != nil {
		return nil, requests, varbinds, err
	}
	for idx, v := range arp[0].rows {
		ifIdx, addr, ok := strings.Cut(idx, ".")
		b, isBytes := v.Value.([]byte)
		if !ok || !isBytes || len(b) != 6 {
			continue
		}
		out = append(out, record.Neighbor{Source: "arp", LocalPort: ifName[ifIdx], RemoteAddr: addr, RemoteMAC: mac(b)})
	}
	return out, requests, varbinds, nil
}

func mac(b []byte) string {
	parts := make([]string, len(b))
	for i, x := range b {
		parts[i] = fmt.Sprintf("%02x", x)
	}
	return strings.Join(parts, ":")
}
