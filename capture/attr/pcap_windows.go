package attr

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket/pcap"
	"golang.org/x/sys/windows"

	"netmon/agentmode/wire"
	"netmon/capture/source"
)

// Windows specifics of the pcap backend (pcap.go): frames from Npcap's
// wpcap.dll, which gopacket loads at run time without cgo (through
// capture/source), and the socket owners from the iphlpapi tables
// (sockets_windows.go). Compile-checked only: no Windows host runs it.
const pcapRunningNote = ""

// newSockTable reads GetExtendedTcpTable and GetExtendedUdpTable.
func newSockTable() sockTable { return newWinSockets() }

// openCapture opens the pcap backend's source on Windows: the configured
// interface (an Npcap device name or an interface alias), else the one
// chooseInterface picks among Npcap's adapters (iface_npcap.go).
func openCapture(cfg Config) (capture, error) {
	// gopacket tries to load wpcap.dll once at start; asking again
	// gives a precise note rather than a failure of the first call.
	if err := pcap.LoadWinPCAP(); err != nil {
		return capture{}, errors.New(notePcapNoNpcap)
	}
	ifs, err := listNpcap()
	if err != nil {
		return capture{}, fmt.Errorf("pcap: %w", err)
	}
	var it npcapIface
	if cfg.PcapInterface != "" {
		var ok bool
		it, ok = npcapResolve(ifs, cfg.PcapInterface)
		if !ok {
			// Not an adapter Npcap lists by that name: capture/source
			// still matches an interface name to its adapter by address.
			it = npcapIface{stat: ifaceStat{Name: cfg.PcapInterface}}
		}
	} else {
		if len(ifs) == 0 {
			return capture{}, errors.New(notePcapNoAdapters)
		}
		list := func() ([]ifaceStat, error) {
			ifs, err = listNpcap()
			stats := make([]ifaceStat, len(ifs))
			for i, it := range ifs {
				stats[i] = it.stat
			}
			return stats, err
		}
		virtual := func(name string) bool {
			it, ok := npcapResolve(ifs, name)
			return !ok || it.virtual
		}
		name, err := chooseInterface(list, virtual, cfg.SampleWindow, time.Sleep)
		if err != nil {
			return capture{}, errNoInterface(err)
		}
		it, _ = npcapResolve(ifs, name)
		it.stat.Name = name
	}
	src, err := source.Open(it.stat.Name, source.Options{Snaplen: cfg.Snaplen, BufferMB: 8, Timeout: readLatency})
	switch {
	case errors.Is(err, fs.ErrPermission), err != nil && strings.Contains(err.Error(), "Access is denied"):
		// PCAP_ERROR_PERM_DENIED, or Npcap's own open refused (installed
		// with "Restrict Npcap driver's access to Administrators only").
		// Npcap's text carries Windows' message, which is localized: on
		// other languages the error is passed on as it is (last case).
		return capture{}, errors.New(notePcapWindowsDenied)
	case errors.Is(err, source.ErrNoSuchInterface):
		return capture{}, fmt.Errorf("pcap: interface %q not found", it.stat.Name)
	case err != nil:
		return capture{}, fmt.Errorf("pcap: %w", err)
	}
	// Windows has no network namespaces: traffic between two other
	// hosts (a Hyper-V switch's guests) is merely seen.
	return capture{iface: it.display(), src: src, foreign: wire.ReasonNotLocal}, nil
}

// listNpcap reads Npcap's adapters and the interface table.
func listNpcap() ([]npcapIface, error) {
	devs, err := pcap.FindAllDevs()
	if err != nil {
		return nil, fmt.Errorf("list Npcap adapters: %w", err)
	}
	nd := make([]npcapDevice, len(devs))
	for i, d := range devs {
		nd[i] = npcapDevice{name: d.Name, flags: d.Flags}
	}
	rows, err := ifRows()
	if err != nil {
		// Without the table every adapter counts as virtual and idle:
		// the choice still finds one that is up.
		rows = nil
	}
	return npcapIfaces(nd, rows), nil
}

// ifRows reads GetIfTable2Ex (with the counters).
func ifRows() ([]winIfRow, error) {
	var t *windows.MibIfTable2
	if err := windows.GetIfTable2Ex(windows.MibIfTableNormal, &t); err != nil {
		return nil, fmt.Errorf("GetIfTable2Ex: %w", err)
	}
	defer windows.FreeMibTable(unsafe.Pointer(t))
	all := unsafe.Slice(&t.Table[0], t.NumEntries)
	out := make([]winIfRow, 0, len(all))
	for i := range all {
		r := &all[i]
		out = append(out, winIfRow{
			guid: r.InterfaceGuid.String(), alias: windows.UTF16ToString(r.Alias[:]), ifType: r.Type,
			flags: r.InterfaceAndOperStatusFlags, operUp: r.OperStatus == windows.IfOperStatusUp,
			in: r.InOctets, out: r.OutOctets,
		})
	}
	return out, nil
}
