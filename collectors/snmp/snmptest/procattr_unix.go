//go:build !windows

package snmptest

import "syscall"

// ownGroup starts a simulator in its own process group (Setpgid), as
// these helpers did before the call moved here for the Windows build.
func ownGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
