package snmptest

import "syscall"

// ownGroup: Windows has no process groups in this sense; the simulators
// (snmpd, snmpsim, lldpd) run on Linux only, and this file exists so
// `GOOS=windows go build ./...` compiles the package.
func ownGroup() *syscall.SysProcAttr { return nil }
