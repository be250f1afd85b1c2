package cli

import (
	"bytes"
	"os"
	"testing"
)

// childEnv makes the test binary run the netmon command line itself
// (os.Args after the program name) and exit with its code: tests run
// `netmon ...` as a separate process, with its own exit code and its own
// memory, without building the binary.
const childEnv = "NETMON_CLI_TEST_CHILD"

// childPeakEnv names a file the child writes its peak resident memory to
// (the "VmHWM:" line of /proc/self/status, Linux), once the command has
// run. Its getrusage maxrss cannot serve: Linux starts a process's maxrss
// at the RSS of the one it was forked from (Go's vfork shares the test
// binary's memory until exec), so a child of a 100 MB test reads 100 MB.
const childPeakEnv = "NETMON_CLI_TEST_PEAK_FILE"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		code := Execute()
		if f := os.Getenv(childPeakEnv); f != "" {
			if st, err := os.ReadFile("/proc/self/status"); err == nil {
				for _, l := range bytes.Split(st, []byte("\n")) {
					if bytes.HasPrefix(l, []byte("VmHWM:")) {
						_ = os.WriteFile(f, l, 0o644)
					}
				}
			}
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}
