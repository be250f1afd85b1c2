//go:build unix

package vault

import (
	"io/fs"
	"os"
)

// modeTooOpen reports whether group or others have any permission bit.
func modeTooOpen(mode fs.FileMode) bool { return mode.Perm()&0o077 != 0 }

// syncDir makes a new directory entry (the key file's link) durable, so a
// power loss right after the first start cannot lose the key while the
// database already holds secrets sealed with it.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}
