package attr

import (
	"errors"
	"fmt"
	"time"
)

// ifaceStat is what choosing an interface needs to know of one.
type ifaceStat struct {
	Name     string
	Up       bool
	Loopback bool
	Bytes    uint64 // RX+TX since boot
}

// chooseInterface picks the pcap interface when collect.pcap_interface is
// empty (spec 1): a physical interface that is up; virtual and VPN
// adapters only when no physical one exists (loopback last of all); among
// several candidates, the one that moved the most RX+TX bytes during
// window (ties: the first by name order of list). list reads the
// interfaces with their counters; virtual tells a virtual adapter.
func chooseInterface(list func() ([]ifaceStat, error), virtual func(string) bool, window time.Duration, sleep func(time.Duration)) (string, error) {
	all, err := list()
	if err != nil {
		return "", err
	}
	var phys, virt, loop []string
	for _, it := range all {
		switch {
		case !it.Up:
		case it.Loopback:
			loop = append(loop, it.Name)
		case virtual(it.Name):
			virt = append(virt, it.Name)
		default:
			phys = append(phys, it.Name)
		}
	}
	cands := phys
	if len(cands) == 0 {
		cands = virt
	}
	if len(cands) == 0 {
		cands = loop
	}
	switch len(cands) {
	case 0:
		return "", errors.New("no interface is up")
	case 1:
		return cands[0], nil
	}
	before := bytesOf(all)
	sleep(window)
	now, err := list()
	if err != nil {
		return "", err
	}
	after := bytesOf(now)
	best, bestDelta := "", uint64(0)
	for _, name := range cands {
		d := after[name] - min(after[name], before[name])
		if best == "" || d > bestDelta {
			best, bestDelta = name, d
		}
	}
	return best, nil
}

func bytesOf(list []ifaceStat) map[string]uint64 {
	m := make(map[string]uint64, len(list))
	for _, it := range list {
		m[it.Name] = it.Bytes
	}
	return m
}

// errNoInterface wraps a failure to pick an interface.
func errNoInterface(err error) error {
	return fmt.Errorf("pcap: no interface to capture (set collect.pcap_interface): %w", err)
}
