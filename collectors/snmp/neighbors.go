package snmp

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

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
	// Port ids come with their subtype and a description: lldpd (and
	// many switches) send the MAC address as the port id, so the name is
	// the description then (portName).
	lldp, err := walk(1024, oidLldpLocPortID, oidLldpRemEntry+"7", oidLldpRemEntry+"9", oidLldpRemManAddr,
		oidLldpLocPortSub, oidLldpLocPortDesc, oidLldpRemEntry+"6", oidLldpRemEntry+"8")
	if err != nil {
		return nil, requests, varbinds, err
	}
	locPort := map[string]string{}
	for idx, v := range lldp[0].rows {
		locPort[idx] = portName(lldp[4].rows[idx], v, lldp[5].rows[idx])
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
			RemotePort: portName(lldp[6].rows[idx], lldp[1].rows[idx], lldp[7].rows[idx]), RemoteAddr: manAddr[idx]})
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

// portName names an LLDP port from its id, id subtype and description:
// the id when it is a printable name (interfaceAlias, interfaceName,
// local, or no subtype given), else the description, else the MAC
// address (subtype 3) or the id as it is.
func portName(subtype, id, desc gosnmp.SnmpPDU) string {
	b, _ := id.Value.([]byte)
	st := num(subtype)
	if st != 3 && printable(b) {
		return string(b)
	}
	if d := str(desc); d != "" {
		return d
	}
	if st == 3 && len(b) == 6 {
		return mac(b)
	}
	return str(id)
}

// printable reports whether b is a non-empty name (printable ASCII or
// UTF-8 text, no control bytes).
func printable(b []byte) bool {
	if len(b) == 0 || !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func mac(b []byte) string {
	parts := make([]string, len(b))
	for i, x := range b {
		parts[i] = fmt.Sprintf("%02x", x)
	}
	return strings.Join(parts, ":")
}
