package netflow

import (
	"fmt"
	"net/netip"
	"time"

	"netmon/store/record"
)

// NetFlow v5 (Cisco's fixed format): a 24-byte header and count records
// of 48 bytes, IPv4 only.
const (
	v5Header = 24
	v5Record = 48
)

// decodeV5 appends the records of a v5 datagram. The count field is
// checked against the length before anything is read: a datagram
// shorter than its count says is rejected whole (ErrShort) rather than
// half-decoded, so it is one counted error like any other. Bytes after
// the last record are ignored (some exporters pad).
//
// Packets and octets are not scaled by the header's sampling interval:
// a sampled v5 exporter is rare and the flow row has no rate column.
func decodeV5(data []byte, exporter netip.Addr, now time.Time, out []record.Flow) ([]record.Flow, error) {
	if len(data) < v5Header {
		return out, fmt.Errorf("%w: v5 header needs %d bytes, have %d", ErrShort, v5Header, len(data))
	}
	count := int(be16(data[2:]))
	if need := v5Header + count*v5Record; len(data) < need {
		return out, fmt.Errorf("%w: v5 count %d needs %d bytes, have %d", ErrShort, count, need, len(data))
	}
	uptime := be32(data[4:])
	secs := int64(be32(data[8:]))
	nsecs := int64(be32(data[12:]))
	clk := newClock(now, secs)
	// The header's wall clock in milliseconds, minus how long before
	// the export each flow's Last packet was seen.
	exportMs := secs*1000 + nsecs/1e6
	for i := range count {
		r := data[v5Header+i*v5Record:][:v5Record]
		f := record.Flow{
			Exporter: exporter,
			Src:      netip.AddrFrom4([4]byte(r[0:4])),
			Dst:      netip.AddrFrom4([4]byte(r[4:8])),
			Packets:  uint64(be32(r[16:])),
			Octets:   uint64(be32(r[20:])),
			SrcPort:  be16(r[32:]),
			DstPort:  be16(r[34:]),
			Proto:    r[38],
		}
		if clk.exportOK {
			f.TS = clk.settle(uptimeTS(exportMs, uptime, be32(r[28:])))
		} else {
			f.TS = clk.fallback()
		}
		out = append(out, f)
	}
	return out, nil
}

// uptimeTS turns a flow time given in exporter uptime milliseconds into
// Unix seconds, from the export's wall clock (ms) and uptime. The
// difference is taken modulo 2^32, so a 49.7-day uptime wrap between the
// flow and the export is harmless; a flow that "ended" after the export
// (a negative difference: clock jitter) is put at the export time.
func uptimeTS(exportMs int64, uptime, at uint32) int64 {
	ago := int64(int32(uptime - at))
	if ago < 0 {
		ago = 0
	}
	return floorDiv(exportMs-ago, 1000)
}

// floorDiv rounds toward minus infinity, so a time just before the epoch
// is not rounded up into it.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
