//go:build !unix

package compliance

import "time"

// cpuTime is unavailable here: benchmarks report 0 CPU.
func cpuTime() time.Duration { return 0 }
