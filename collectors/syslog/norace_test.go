//go:build !race

package syslog

// raceEnabled: see race_test.go.
const raceEnabled = false
