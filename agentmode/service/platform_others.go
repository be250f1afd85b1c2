//go:build !linux && !windows && !darwin

package service

import (
	ks "github.com/kardianos/service"
)

// DefaultStateDir is where an installed agent keeps its state when -state
// is not given.
func DefaultStateDir() string { return "/var/db/netmon" }

func platformOptions(Config, ks.KeyValue) error { return nil }

// Unreachable returns the paths the service could not read; none here.
func Unreachable([]string) []string { return nil }
