//go:build !linux && !cgo && !windows && !darwin

package source

import (
	"fmt"
	"net"
)

// Open fails on this build: without cgo there is no libpcap binding for
// this system. The error wraps ErrUnsupported.
func Open(device string, _ Options) (Source, error) {
	return nil, fmt.Errorf("open capture on %q: %w", device, ErrUnsupported)
}

// canSniff is always false on this build: Open cannot succeed.
func canSniff(net.Interface) bool { return false }
