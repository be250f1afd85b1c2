package cli

import (
	"os"
	"testing"
)

// childEnv makes the test binary run the netmon command line itself
// (os.Args after the program name) and exit with its code: tests run
// `netmon ...` as a separate process, with its own exit code and its own
// resource usage, without building the binary.
const childEnv = "NETMON_CLI_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Execute())
	}
	os.Exit(m.Run())
}
