//go:build linux || darwin

package attr

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"netmon/agentmode/wire"
	"netmon/capture/source"
)

// openCapture opens the pcap backend's source on Linux and macOS: the
// configured interface, else the one chooseInterface picks from the
// system's interfaces and their counters.
func openCapture(cfg Config) (capture, error) {
	iface := cfg.PcapInterface
	if iface == "" {
		var err error
		iface, err = chooseInterface(listInterfaces, isVirtual, cfg.SampleWindow, time.Sleep)
		if err != nil {
			return capture{}, errNoInterface(err)
		}
	}
	src, err := source.Open(iface, source.Options{Snaplen: cfg.Snaplen, BufferMB: 8, Timeout: readLatency})
	switch {
	case errors.Is(err, fs.ErrPermission):
		return capture{}, errors.New(notePcapDenied)
	case errors.Is(err, source.ErrNoSuchInterface):
		return capture{}, fmt.Errorf("pcap: interface %q not found", iface)
	case err != nil:
		return capture{}, fmt.Errorf("pcap: %w", err)
	}
	// Traffic between two other hosts on a virtual Ethernet device
	// (veth, bridge) belongs to containers; on a physical one it is
	// forwarded or merely seen.
	foreign := wire.ReasonNotLocal
	if isVirtual(iface) && src.LinkType() == linkEthernet {
		foreign = wire.ReasonOtherNamespace
	}
	return capture{iface: iface, src: src, foreign: foreign}, nil
}

// listInterfaces reads the interfaces and their counters for
// chooseInterface.
func listInterfaces() ([]ifaceStat, error) {
	ifs, err := source.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]ifaceStat, 0, len(ifs))
	for _, it := range ifs {
		out = append(out, ifaceStat{Name: it.Name, Up: it.Up, Loopback: it.Loopback, Bytes: it.RxBytes + it.TxBytes})
	}
	return out, nil
}
