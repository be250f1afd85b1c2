package service

import (
	ks "github.com/kardianos/service"
)

// DefaultStateDir is where an installed agent keeps its state when -state
// is not given.
func DefaultStateDir() string { return "/Library/Application Support/netmon" }

// platformOptions starts the launchd job at load and keeps it alive.
func platformOptions(_ Config, opts ks.KeyValue) error {
	opts["RunAtLoad"] = true
	opts["KeepAlive"] = true
	return nil
}

// Unreachable returns the paths the service could not read; none here.
func Unreachable([]string) []string { return nil }
