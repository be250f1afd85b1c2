//go:build race

package syslog

// raceEnabled: the race detector slows the receiver several times over,
// so TestRate then checks conservation through the kernel counter instead
// of asking for zero kernel drops.
const raceEnabled = true
