// Package version is a leaf holding what the build says about itself. The
// Makefile stamps Version, Commit and Date with -ldflags -X; a plain
// `go build` leaves the development defaults.
package version

import (
	"runtime"
	"strconv"
)

// Version is the release version (SemVer) or a git describe string; "dev"
// for an unstamped build.
var Version = "dev"

// Commit is the git commit the binary was built from, when stamped.
var Commit = ""

// Date is the build time in RFC 3339, when stamped.
var Date = ""

// ProtocolVersion is the highest hub<->agent protocol version this binary
// speaks (spec section 9.2).
const ProtocolVersion = 1

// String is the one-line human form used by `netmon version` and the logs.
func String() string {
	s := "netmon " + Version
	if Commit != "" {
		s += " (commit " + Commit
		if Date != "" {
			s += ", built " + Date
		}
		s += ")"
	}
	return s + " " + runtime.Version() + " protocol " + strconv.Itoa(ProtocolVersion)
}
