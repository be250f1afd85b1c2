//go:build unix

package compliance

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time: on a loaded machine the
// honest measure of what a benchmark costs (wall time includes waiting
// for a core).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
