//go:build !windows && !darwin

package service

import "path/filepath"

// UserStateDir is where an agent run by an ordinary user keeps its state:
// $XDG_STATE_HOME/netmon, else ~/.local/state/netmon (the XDG base
// directory specification's place for state that survives restarts but
// is not configuration). "" when there is no home directory.
func UserStateDir(getenv func(string) string, home func() (string, error)) string {
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "netmon")
	}
	h, err := home()
	if err != nil || h == "" {
		return ""
	}
	return filepath.Join(h, ".local", "state", "netmon")
}
