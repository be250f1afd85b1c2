//go:build !unix

package httpguard

// raiseFileLimit: Windows has no per-process descriptor limit of this
// kind; the caps derive from a generous figure.
func raiseFileLimit() (before, after uint64, err error) { return 16384, 16384, nil }
