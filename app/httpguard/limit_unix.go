//go:build unix

package httpguard

import "syscall"

// raiseFileLimit sets the open file soft limit to the hard limit and
// returns the soft limit before and after. (Go's runtime does the same at
// start on Linux; doing it here too makes the figure the caps derive from
// the one in force, on every Unix.)
func raiseFileLimit() (before, after uint64, err error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, 0, err
	}
	before = uint64(l.Cur)
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			return before, before, nil
		}
	}
	return before, uint64(l.Cur), nil
}
