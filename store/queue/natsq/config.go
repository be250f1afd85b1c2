package natsq

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MinServerVersion is the oldest nats-server New accepts. The 2.9 line
// (Debian 12 ships 2.9.10) is out of support and silently drops stream
// settings it does not know (PEERS-2 section 8: StreamConfig.Metadata
// comes back empty, no error), so a limit asked for could be ignored
// without a word; the code is tested against 2.15.2 only.
const MinServerVersion = "2.10.0"

// Subject names. Producers publish to SubjectPrefix+kind (ingest.syslog,
// ingest.telemetry, ingest.deep); a message that failed MaxDeliver times
// goes to DeadSubject with its reason in the DeadReasonHeader header.
const (
	SubjectPrefix = "ingest."
	DeadSubject   = "ingest.dead"
)

// Headers a dead letter carries besides the original payload.
const (
	DeadReasonHeader     = "Netmon-Dead-Reason"
	DeadKindHeader       = "Netmon-Kind"
	DeadMsgIDHeader      = "Netmon-Msg-Id"
	DeadDeliveriesHeader = "Netmon-Deliveries"
)

// Config configures the JetStream queue.
type Config struct {
	// URL is the server address (-nats nats://host:4222); several may be
	// given comma-separated.
	URL string
	// User and Password, or CredsFile (a .creds file with a JWT and an
	// NKey seed), authenticate; CAFile is a PEM bundle to verify a TLS
	// server (tls:// URLs, or servers that require TLS).
	User, Password string
	CredsFile      string
	CAFile         string
	// Workers is how many fetch-and-write loops run per kind
	// (-queue-workers).
	Workers int
	// Stream is the JetStream stream name; its subjects are ingest.>.
	Stream string
	// MaxAge (24 h) and MaxMsgs (5 million) bound the stream (spec 8).
	// The stream is a work queue: a message is removed once acknowledged,
	// so MaxMsgs bounds the backlog; when it is reached a publish is
	// refused (discard new) and the producer counts the records as shed,
	// rather than the oldest unwritten records being deleted unseen.
	MaxAge  time.Duration
	MaxMsgs int64
	// MaxDeliver (10) write attempts, then the message goes to
	// ingest.dead with the reason.
	MaxDeliver int
	// RetryDelay (2 s) is how long a message whose write failed waits
	// before it is delivered again.
	RetryDelay time.Duration
	// DupWindow is the stream's duplicate window: a publish with a
	// Nats-Msg-Id already seen within it is acknowledged and not stored
	// again. 15 minutes by default: longer than the agent's retry cap
	// (agentmode.MaxBackoff, 5 min, +20% jitter) plus the replay of its
	// disk queue. Telemetry and deep batches are also unique by
	// (agent_id, seq) in the database, so a repeat after the window is
	// still stored once.
	DupWindow time.Duration
	// AckWait is how long the server waits for an acknowledgement before
	// it delivers a message again (a hub killed mid-batch); longer than
	// WriteTimeout.
	AckWait time.Duration
	// WriteTimeout bounds one database write; PublishTimeout one publish
	// (a producer waits for the server's acknowledgement up to that long).
	WriteTimeout   time.Duration
	PublishTimeout time.Duration
	// FetchBatch is how many messages a worker takes at once (written in
	// one transaction); FetchWait how long a fetch waits for the first.
	FetchBatch int
	FetchWait  time.Duration
	// ReconnectWait is the pause between reconnect attempts; the client
	// reconnects for ever.
	ReconnectWait time.Duration
}

// DefaultConfig: the limits of spec 8 (24 h, 5 million messages, 10
// deliveries, 2 s retry), a 15 minute duplicate window, 4 workers per
// kind taking up to 256 messages at once.
func DefaultConfig() Config {
	return Config{Workers: 4, Stream: "INGEST", MaxAge: 24 * time.Hour, MaxMsgs: 5_000_000, MaxDeliver: 10,
		RetryDelay: 2 * time.Second, DupWindow: 15 * time.Minute, AckWait: time.Minute,
		WriteTimeout: 30 * time.Second, PublishTimeout: 2 * time.Second,
		FetchBatch: 256, FetchWait: time.Second, ReconnectWait: time.Second}
}

// withDefaults fills the zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.Stream == "" {
		c.Stream = d.Stream
	}
	if c.MaxAge <= 0 {
		c.MaxAge = d.MaxAge
	}
	if c.MaxMsgs <= 0 {
		c.MaxMsgs = d.MaxMsgs
	}
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = d.MaxDeliver
	}
	if c.RetryDelay <= 0 {
		c.RetryDelay = d.RetryDelay
	}
	if c.DupWindow <= 0 {
		c.DupWindow = d.DupWindow
	}
	if c.AckWait <= 0 {
		c.AckWait = d.AckWait
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	if c.PublishTimeout <= 0 {
		c.PublishTimeout = d.PublishTimeout
	}
	if c.FetchBatch <= 0 {
		c.FetchBatch = d.FetchBatch
	}
	if c.FetchWait <= 0 {
		c.FetchWait = d.FetchWait
	}
	if c.ReconnectWait <= 0 {
		c.ReconnectWait = d.ReconnectWait
	}
	return c
}

// CheckServerVersion returns an error naming both versions when v (as a
// server reports it in INFO: "2.15.2", "2.11.0-RC.3", "v2.10.1") is older
// than MinServerVersion or cannot be read. A pre-release of the minimum
// counts as older.
func CheckServerVersion(v string) error {
	got, pre, ok := parseVersion(v)
	if !ok {
		return fmt.Errorf("nats-server version %q cannot be read; netmon needs nats-server %s or newer", v, MinServerVersion)
	}
	min, _, _ := parseVersion(MinServerVersion)
	for i := range got {
		if got[i] != min[i] {
			if got[i] < min[i] {
				return tooOld(v)
			}
			return nil
		}
	}
	if pre {
		return tooOld(v)
	}
	return nil
}

func tooOld(v string) error {
	return fmt.Errorf("nats-server %s is too old: netmon's JetStream ingest needs nats-server %s or newer (upgrade the server, or run without -nats to use the in-process queue)", v, MinServerVersion)
}

// parseVersion reads major.minor.patch and whether a pre-release suffix
// follows ("-RC.1", "-beta").
func parseVersion(v string) (n [3]int, pre bool, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	core, suffix, _ := strings.Cut(v, "-")
	core, _, _ = strings.Cut(core, "+")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return n, false, false
	}
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return n, false, false
		}
		n[i] = x
	}
	return n, suffix != "", true
}
