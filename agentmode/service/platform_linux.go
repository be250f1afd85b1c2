package service

import (
	"strings"

	ks "github.com/kardianos/service"
)

// DefaultStateDir is where an installed agent keeps its state when -state
// is not given: systemd's conventional StateDirectory location.
func DefaultStateDir() string { return "/var/lib/netmon" }

// platformOptions hands our hardened unit to the library. Only install
// writes it; control actions (no executable given) do not need it.
func platformOptions(c Config, opts ks.KeyValue) error {
	if c.Executable == "" {
		return nil
	}
	unit, err := Unit(c)
	if err != nil {
		return err
	}
	opts["SystemdScript"] = unit
	return nil
}

// Unreachable returns the paths the hardened unit hides from the agent:
// ProtectHome hides /home, /root and /run/user, PrivateTmp gives the
// service its own /tmp and /var/tmp.
func Unreachable(paths []string) []string {
	var out []string
	for _, p := range paths {
		for _, dir := range []string{"/home", "/root", "/run/user", "/tmp", "/var/tmp"} {
			if p == dir || strings.HasPrefix(p, dir+"/") {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
