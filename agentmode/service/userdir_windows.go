package service

import "path/filepath"

// UserStateDir is where an agent run by an ordinary user keeps its state:
// %LocalAppData%\netmon (not roamed between machines: the identity is
// this machine's). "" when the variable is not set.
func UserStateDir(getenv func(string) string, _ func() (string, error)) string {
	if x := getenv("LocalAppData"); x != "" {
		return filepath.Join(x, "netmon")
	}
	return ""
}
