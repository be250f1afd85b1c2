package record

import "net/netip"

// TrafficMinute is one finished minute of the hub capture's traffic, as
// the capture hands it over and the history stores it.
type TrafficMinute struct {
	// TS is the minute's start (Unix seconds).
	TS int64
	// InBytes, OutBytes and LocalBytes are the minute's bytes by direction.
	InBytes    int64
	OutBytes   int64
	LocalBytes int64
	Packets    int64
	// PeakIn and PeakOut are the busiest second's bytes.
	PeakIn  int64
	PeakOut int64
	// Seconds is how many of the minute's seconds were captured.
	Seconds int64
	// Dropped is how many packets the kernel dropped in the minute before
	// the capture read them (the SLA metric packet_drop).
	Dropped int64
}

// RemoteTraffic is the bytes exchanged with one public remote address in
// a minute of the hub capture.
type RemoteTraffic struct {
	IP      netip.Addr
	Country string
	Bytes   int64
}
