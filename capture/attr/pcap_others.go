//go:build !linux && !darwin && !windows

package attr

import (
	"errors"
	"log/slog"
	"runtime"
)

// startPcap: the pcap backend is built for Linux only so far. Elsewhere
// the packet source needs libpcap through cgo (Npcap on Windows), which
// the CGO_ENABLED=0 release build does not have, and the socket-to-process
// mapping of this backend reads Linux's tables.
func startPcap(*slog.Logger, Config) (Backend, error) {
	return nil, errors.New("pcap: not built for " + runtime.GOOS + " in this version (Linux and macOS only)")
}
