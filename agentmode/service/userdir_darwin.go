package service

import "path/filepath"

// UserStateDir is where an agent run by an ordinary user keeps its state:
// ~/Library/Application Support/netmon, macOS's per-user place for it.
// "" when there is no home directory.
func UserStateDir(_ func(string) string, home func() (string, error)) string {
	h, err := home()
	if err != nil || h == "" {
		return ""
	}
	return filepath.Join(h, "Library", "Application Support", "netmon")
}
