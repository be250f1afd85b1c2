// Package rules holds the alert rules of spec 6.3 as pure evaluators:
// each takes its input (the capture's rates, connection inventories,
// interface rates) and the time, keeps the little state it needs (how
// many consecutive seconds over a threshold, the seen-table of processes)
// and returns the alerts its condition raises now. It knows nothing of
// cooldown, silences or storage: the engine (package alerting) decides
// which alerts become events.
//
// The rules run on hot paths (every second; 10 000 agents' inventories
// every 5 s), so the steady state allocates nothing per connection: keys
// and messages are built only when a rule fires.
package rules

import "netmon/store/record"

// Alert is a condition a rule raises; the engine turns it into an event
// (or a repeat of an open one).
type Alert struct {
	Kind     string
	Key      string
	Message  string
	Severity int
	Site     string
	AgentID  int64
	// Process is the process the alert is about (proc, port; "" when the
	// rule has none or the agent could not name it).
	Process string
	// Count is how many occurrences the alert stands for (0 means 1): a
	// grouped alert (the ioc rule's names under one listed entry) adds
	// them all to its event's count.
	Count int64
}

// Kinds of spec 6.3 and their severities on the 0-10 scale.
const (
	KindBandwidth = "bw"
	KindPort      = "port"
	KindProc      = "proc"
	KindTarget    = "target"
	KindIfaceUtil = "iface_util"

	SeverityPort   = 9
	SeverityBW     = 5
	SeverityProc   = 4
	SeverityTarget = 4
	// iface_util has no severity in the spec: warn like bw, crit one
	// step under vpn_down.
	SeverityIfaceWarn = 5
	SeverityIfaceCrit = 7
)

// The inputs below are store/record's, where their owners (the capture,
// the socket lister, the fleet) produce them without importing alerting;
// the aliases keep the rules' names.
type (
	// Conn is one established connection of an inventory.
	Conn = record.Conn
	// Inventory is one host's connection list.
	Inventory = record.Inventory
	// Traffic is what the bw and target rules read of the hub's capture.
	Traffic = record.Traffic
	// Endpoint is a remote address and the bytes exchanged with it.
	Endpoint = record.TrafficEndpoint
)

// IfaceRate is one interface's utilisation input.
type IfaceRate struct {
	AgentID int64
	Site    string
	Name    string
	// SpeedBps is the link speed in bits per second; 0 = unknown, the
	// interface is not judged.
	SpeedBps float64
	// InBps and OutBps are the current rates in bits per second.
	InBps, OutBps float64
}
