package attr

import "strings"

// The default pcap interface on Windows (spec 1), without a build tag so
// it is tested on Linux: Npcap's adapters (pcap.FindAllDevs: names
// \Device\NPF_{GUID}, flags) joined by GUID to the system's interface
// table (GetIfTable2Ex: one MIB_IF_ROW2 per interface), and handed to
// chooseInterface as on Linux. What each choice uses:
//
//   - physical: the row's InterfaceAndOperStatusFlags has both
//     HardwareInterface and ConnectorPresent (ConnectorPresent is what
//     Get-NetAdapter -Physical lists). Hyper-V's vEthernet, VPN and TAP
//     adapters, WAN Miniports and an adapter without a row (Npcap's
//     loopback) are virtual. Under a Hyper-V external switch the host's
//     addresses sit on the vEthernet adapter, but the physical adapter
//     beneath it still carries every frame, so it is still preferred.
//   - up: the row's OperStatus is up; without a row, pcap's
//     PCAP_IF_UP and PCAP_IF_RUNNING flags.
//   - loopback: pcap's PCAP_IF_LOOPBACK flag, or a row of type
//     IF_TYPE_SOFTWARE_LOOPBACK.
//   - bytes: the row's InOctets + OutOctets; 0 without a row.
//
// The name reported as attr_iface is the row's alias ("Ethernet",
// "Wi-Fi"), the name net.Interfaces and the agent's rates[] use; the
// capture is opened by the Npcap device name.

// npcapDevice is what pcap.FindAllDevs says of one adapter.
type npcapDevice struct {
	name  string // \Device\NPF_{GUID}, or \Device\NPF_Loopback
	flags uint32 // PCAP_IF_*
}

// winIfRow is what one MIB_IF_ROW2 says of an interface.
type winIfRow struct {
	guid    string // "{XXXXXXXX-...}", as GUID.String gives it
	alias   string
	ifType  uint32
	flags   uint8 // InterfaceAndOperStatusFlags
	operUp  bool
	in, out uint64
}

// pcap_if_t flags (pcap/pcap.h).
const (
	pcapIfLoopback = 0x1
	pcapIfUp       = 0x2
	pcapIfRunning  = 0x4
)

// The bits of MIB_IF_ROW2.InterfaceAndOperStatusFlags (netioapi.h: a
// bit field, first member in the lowest bit) and the loopback IfType.
const (
	ifHardwareInterface    = 0x01
	ifConnectorPresent     = 0x04
	ifTypeSoftwareLoopback = 24
	npcapDevicePrefix      = `\Device\NPF_`
	ifPhysical             = ifHardwareInterface | ifConnectorPresent
)

// npcapIface is one Npcap adapter with what chooseInterface needs.
type npcapIface struct {
	stat    ifaceStat // Name: the Npcap device name
	alias   string    // "" without a row
	virtual bool
}

// npcapIfaces joins devs to rows by the GUID of the device name.
func npcapIfaces(devs []npcapDevice, rows []winIfRow) []npcapIface {
	byGUID := make(map[string]winIfRow, len(rows))
	for _, r := range rows {
		byGUID[strings.ToUpper(r.guid)] = r
	}
	out := make([]npcapIface, 0, len(devs))
	for _, d := range devs {
		it := npcapIface{stat: ifaceStat{Name: d.name, Loopback: d.flags&pcapIfLoopback != 0}, virtual: true}
		r, ok := byGUID[strings.ToUpper(strings.TrimPrefix(d.name, npcapDevicePrefix))]
		if !ok {
			it.stat.Up = d.flags&(pcapIfUp|pcapIfRunning) == pcapIfUp|pcapIfRunning
			out = append(out, it)
			continue
		}
		it.alias = r.alias
		it.stat.Up = r.operUp
		it.stat.Loopback = it.stat.Loopback || r.ifType == ifTypeSoftwareLoopback
		it.stat.Bytes = r.in + r.out
		it.virtual = r.flags&ifPhysical != ifPhysical
		out = append(out, it)
	}
	return out
}

// npcapResolve finds the adapter of a configured collect.pcap_interface:
// a device name or an alias (case-insensitive, as Windows compares
// them). ok is false when none matches.
func npcapResolve(ifs []npcapIface, name string) (npcapIface, bool) {
	for _, it := range ifs {
		if strings.EqualFold(it.stat.Name, name) || (it.alias != "" && strings.EqualFold(it.alias, name)) {
			return it, true
		}
	}
	return npcapIface{}, false
}

// display is the name reported as attr_iface.
func (it npcapIface) display() string {
	if it.alias != "" {
		return it.alias
	}
	return it.stat.Name
}
