//go:build !linux && !darwin && !windows

package attr

import (
	"errors"
	"log/slog"
	"runtime"
)

// startPcap: the pcap backend is built for Linux, macOS and Windows.
// Elsewhere the packet source needs libpcap through cgo, which the
// CGO_ENABLED=0 release build does not have, and no socket-to-process
// mapping is written for those systems.
func startPcap(*slog.Logger, Config) (Backend, error) {
	return nil, errors.New("pcap: not built for " + runtime.GOOS + " in this version (Linux, macOS and Windows only)")
}
