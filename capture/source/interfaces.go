package source

import (
	"fmt"
	"net"

	psnet "github.com/shirou/gopsutil/v4/net"
)

// Interface is a network interface as GET /api/interfaces shows it (spec
// section 2.2).
type Interface struct {
	Name   string `json:"name"`
	HWAddr string `json:"hw_addr"` // "" when the interface has none (lo, tun)
	MTU    int    `json:"mtu"`
	// Up is the operational state: administratively up and running (a
	// carrier, or a veth whose peer is up).
	Up       bool `json:"up"`
	Loopback bool `json:"loopback"`
	// CanSniff tells whether Open would succeed for this process now (right
	// privileges, a supported link type). It is true for an interface that
	// is down: the capture opens and frames flow once the link comes up.
	CanSniff bool `json:"can_sniff"`
	// Addresses are the interface's addresses in CIDR notation.
	Addresses []string `json:"addresses"`
	// Counters since boot, from the operating system (gopsutil pernic).
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
}

// Interfaces lists the system's network interfaces with their addresses,
// counters and whether they can be captured on. The can_sniff probe costs a
// few system calls per interface (see canSniff of the platform file); the
// counters come from one read of the system's table (/proc/net/dev on
// Linux).
func Interfaces() ([]Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	counters, err := psnet.IOCounters(true)
	if err != nil {
		return nil, fmt.Errorf("read interface counters: %w", err)
	}
	byName := make(map[string]psnet.IOCountersStat, len(counters))
	for _, c := range counters {
		byName[c.Name] = c
	}
	out := make([]Interface, 0, len(ifs))
	for _, ifi := range ifs {
		it := Interface{
			Name:      ifi.Name,
			HWAddr:    ifi.HardwareAddr.String(),
			MTU:       ifi.MTU,
			Up:        ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagRunning != 0,
			Loopback:  ifi.Flags&net.FlagLoopback != 0,
			CanSniff:  canSniff(ifi),
			Addresses: []string{},
		}
		// An interface that vanished between the two calls has no
		// addresses; that is not an error worth failing the list for.
		if addrs, err := ifi.Addrs(); err == nil {
			for _, a := range addrs {
				it.Addresses = append(it.Addresses, a.String())
			}
		}
		if c, ok := byName[ifi.Name]; ok {
			it.RxBytes, it.TxBytes = c.BytesRecv, c.BytesSent
			it.RxPackets, it.TxPackets = c.PacketsRecv, c.PacketsSent
		}
		out = append(out, it)
	}
	return out, nil
}
