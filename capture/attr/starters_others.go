//go:build !linux && !windows

package attr

var platformStarters = starters{pcap: startPcap}
