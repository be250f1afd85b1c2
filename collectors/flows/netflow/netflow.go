// Package netflow decodes NetFlow v5, NetFlow v9 and IPFIX (v10) export
// datagrams into record.Flow values. It sits under the hub's flow
// listener (collectors/flows), which reads UDP, hands each datagram here
// with its source address and writes the flows into record.Sink; this
// package does no I/O and imports only store/record.
//
// Why our own decoders rather than goflow2's: goflow2 decodes into
// generic structures (a []DataField of interface{} values per record)
// and allocates about 18 times per flow, ~660 ns of CPU per flow through
// its producer (its decoders alone: ~21 allocations per flow on
// softflowd's datagrams, see BenchmarkGoflow2V9). The hub aims at
// 1 000 000 flows/s with at most 1 µs of CPU per flow including storage,
// so decoding must cost a small fraction of that and allocate nothing in
// steady state. Here each template is compiled once into a field plan
// (the offsets of the few fields a flow row needs), and a data record is
// decoded by reading those offsets straight into the caller's
// []record.Flow. goflow2 stays the test oracle: the tests decode the same
// softflowd exports with goflow2's decoders and compare field by field.
//
// What a flow gets: IPv4 addresses (8, 12), else IPv6 (27, 28); ports
// (7, 11, 0 when absent, as for ICMP); protocol (4); packets from 2, else
// 86, else 24; octets from 1, else 85, else 23, never scaled by a
// sampling rate; the end time from the best clock the template offers
// (see msg.ts), else the export time, else the receive time.
//
// Hostile input (RELIABILITY.md cases 1, 3, 6): every length is checked
// before it is used, allocations sized from the wire are capped
// (maxTemplateFields), loops advance at least one byte per step, and a
// datagram yields its flows or exactly one error (ErrShort, ErrVersion or
// ErrMalformed, wrapped with detail) and then no flows at all, so errors
// are counted per datagram. Templates learned before the error in the
// same datagram stay learned: they were valid on their own.
package netflow

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"netmon/store/record"
)

// Errors a datagram can be rejected with; the returned error wraps one of
// them with detail, so callers branch with errors.Is.
var (
	// ErrShort: the datagram ends before its header, or before what its
	// header declares (v5 record count, IPFIX message length).
	ErrShort = errors.New("netflow: datagram too short")
	// ErrVersion: the first two bytes are not 5, 9 or 10.
	ErrVersion = errors.New("netflow: unsupported version")
	// ErrMalformed: a set or template is inconsistent (bad length, zero
	// length field, field wider than its type, too many fields ...).
	ErrMalformed = errors.New("netflow: malformed datagram")
)

// Result tells what one datagram contained, for the caller's metrics.
// With an error, Flows is 0 and the other counts stop where the error
// was found.
type Result struct {
	// Version is the export version (5, 9 or 10); 0 when unreadable.
	Version uint16
	// Flows is the number of flows appended to out.
	Flows int
	// TemplatesLearned counts data template records accepted: new,
	// changed or re-sent unchanged (exporters repeat them periodically).
	TemplatesLearned int
	// OptionsTemplates counts options template records accepted.
	OptionsTemplates int
	// MissingTemplate counts data sets skipped because their template
	// is unknown (not learned yet, evicted, or lost with a restart
	// before templates were persisted). They are never guessed.
	MissingTemplate int
	// SkippedSets counts sets deliberately not decoded: options data
	// and reserved set ids.
	SkippedSets int
	// TemplatesRefused counts template records not stored because the
	// exporter table is full (Config.MaxExporters).
	TemplatesRefused int
}

// Decoder decodes datagrams and keeps the templates of v9 and IPFIX
// exporters. It is safe for concurrent use: decode goroutines share it,
// templates sit behind a read-write lock per exporter and are compiled
// into immutable plans that readers use without holding a lock.
type Decoder struct {
	cfg Config

	mu        sync.RWMutex
	exporters map[netip.Addr]*exporter

	changed atomic.Uint64
}

// NewDecoder returns a Decoder with an empty template cache. Zero limits
// in cfg take their DefaultConfig value.
func NewDecoder(cfg Config) *Decoder {
	return &Decoder{cfg: cfg.withDefaults(), exporters: make(map[netip.Addr]*exporter)}
}

// Decode decodes one datagram (version from its first two bytes: 5, 9 or
// 10) received from exporter, appending its flows to out, and returns
// the extended slice. now is the receive time: flows take it as their
// timestamp when the exporter's clock gives nothing usable. On error out
// is returned at its original length: a datagram gives flows or one
// error, never both.
//
// Decode allocates nothing when out has room and the datagram only
// repeats templates it already knows.
func (d *Decoder) Decode(data []byte, exporter netip.Addr, now time.Time, out []record.Flow) ([]record.Flow, Result, error) {
	start := len(out)
	var res Result
	if len(data) < 2 {
		return out, res, fmt.Errorf("%w: %d bytes", ErrShort, len(data))
	}
	res.Version = be16(data)
	// An IPv4 exporter reaching a dual-stack socket shows up as
	// ::ffff:a.b.c.d; unmapped, it is the same device either way.
	exporter = exporter.Unmap()
	var err error
	switch res.Version {
	case 5:
		out, err = decodeV5(data, exporter, now, out)
	case 9, 10:
		out, err = d.decodeTemplated(data, exporter, now, out, &res)
	default:
		return out, res, fmt.Errorf("%w %d", ErrVersion, res.Version)
	}
	if err != nil {
		return out[:start], res, err
	}
	res.Flows = len(out) - start
	return out, res, nil
}

// TemplatesChanged is a counter bumped whenever a template is learned,
// replaced by a different one, or evicted. The caller polls it and saves
// Templates again when it moved; re-sent identical templates leave it
// alone, so an exporter repeating its templates causes no writes.
func (d *Decoder) TemplatesChanged() uint64 { return d.changed.Load() }

// clock is the time base of one datagram.
type clock struct {
	now      int64 // receive time, Unix seconds
	bounded  bool  // now is set: times past now+maxAhead are not trusted
	export   int64 // the exporter's clock (header), Unix seconds
	exportOK bool  // export is plausible
}

// Times before 2000 come from exporters whose clock was never set (1970
// after a reboot without NTP); times more than a day ahead of the
// receive time from a wrong clock. Either would put flows where no query
// finds them, so such times fall back to the export time or to now.
const (
	minPlausible = 946684800 // 2000-01-01T00:00:00Z
	maxAhead     = 86400
)

func newClock(now time.Time, export int64) clock {
	c := clock{now: now.Unix(), bounded: !now.IsZero(), export: export}
	c.exportOK = c.plausible(export)
	return c
}

func (c *clock) plausible(ts int64) bool {
	return ts >= minPlausible && (!c.bounded || ts <= c.now+maxAhead)
}

// fallback is the timestamp of a flow whose own time is unusable.
func (c *clock) fallback() int64 {
	if c.exportOK {
		return c.export
	}
	return c.now
}

// settle returns ts if plausible, else the fallback.
func (c *clock) settle(ts int64) int64 {
	if c.plausible(ts) {
		return ts
	}
	return c.fallback()
}

// be16 and be32 read big-endian integers; callers check lengths first.
func be16(b []byte) uint16 { return uint16(b[0])<<8 | uint16(b[1]) }

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// uintN reads a big-endian unsigned integer of 1 to 8 bytes: IPFIX
// reduced-size encoding lets exporters send counters in fewer bytes than
// their type (a 4-byte octetDeltaCount is common).
func uintN(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(be16(b))
	case 4:
		return uint64(be32(b))
	case 8:
		return uint64(be32(b))<<32 | uint64(be32(b[4:]))
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}
