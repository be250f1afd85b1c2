//go:build !linux

package ebpf

import "io"

// Accountant is Linux only.
type Accountant struct{}

// Start returns ErrUnsupported.
func Start() (*Accountant, error) { return nil, ErrUnsupported }

// Read is never called.
func (*Accountant) Read() (Delta, error) { return Delta{}, ErrUnsupported }

// Stats is never called.
func (*Accountant) Stats() ([]ProgStats, error) { return nil, ErrUnsupported }

// EnableStats returns ErrUnsupported.
func EnableStats() (io.Closer, error) { return nil, ErrUnsupported }

// Close does nothing.
func (*Accountant) Close() error { return nil }
