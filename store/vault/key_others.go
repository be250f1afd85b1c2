//go:build !unix

package vault

import "io/fs"

// modeTooOpen is false: outside Unix, file modes do not express who may
// read the file (access control lists do).
func modeTooOpen(fs.FileMode) bool { return false }

// syncDir does nothing: directories cannot be opened for syncing here.
func syncDir(string) error { return nil }
