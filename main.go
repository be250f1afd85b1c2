// Command netmon is the network traffic monitoring hub and agent. All the
// work is in app/cli; see README.md.
package main

import (
	"os"

	"netmon/app/cli"
)

func main() {
	os.Exit(cli.Execute())
}
