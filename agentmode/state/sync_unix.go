//go:build !windows

package state

import "os"

// syncDir makes a rename durable: on POSIX systems the directory entry is
// only on disk once the directory itself is synced. Best effort: the
// rename already happened, and a failure here only widens the window in
// which a power cut could bring the old file back.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
