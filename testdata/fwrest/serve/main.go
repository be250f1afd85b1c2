// Command serve runs the fixture firewall device (collectors/fwrest/fwtest)
// for the console's e2e tests: `go run ./testdata/fwrest/serve <profile dir>
// <token>` prints the device's https URL on one line and serves until
// stdin closes or it is killed. Under testdata, so `go build ./...` and
// the netmon binary never include it.
package main

import (
	"fmt"
	"io"
	"os"

	"netmon/collectors/fwrest/fwtest"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: serve <profile dir> <token>")
		os.Exit(2)
	}
	s := fwtest.Start(os.Args[1], os.Args[2])
	defer s.Close()
	fmt.Println(s.URL)
	// The parent holds stdin open; its exit ends the fixture too.
	_, _ = io.Copy(io.Discard, os.Stdin)
}
