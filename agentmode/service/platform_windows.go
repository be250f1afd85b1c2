package service

import (
	"os"
	"path/filepath"

	ks "github.com/kardianos/service"
)

// DefaultStateDir is where an installed agent keeps its state when -state
// is not given: %ProgramData%\netmon (readable by administrators and
// SYSTEM only by default).
func DefaultStateDir() string {
	base := os.Getenv("ProgramData")
	if base == "" {
		base = `C:\ProgramData`
	}
	return filepath.Join(base, "netmon")
}

// platformOptions asks the service control manager to restart the agent
// 5 seconds after a failure, as the systemd unit does.
func platformOptions(_ Config, opts ks.KeyValue) error {
	opts[ks.OnFailure] = ks.OnFailureRestart
	opts[ks.OnFailureDelayDuration] = "5s"
	opts[ks.StartType] = ks.ServiceStartAutomatic
	return nil
}

// Unreachable returns the paths the service could not read; none here.
func Unreachable([]string) []string { return nil }
