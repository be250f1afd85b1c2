package netflow

import (
	"fmt"
	"net/netip"

	"netmon/store/record"
)

// msg is the state of one v9 or IPFIX datagram being decoded.
type msg struct {
	exporter netip.Addr
	ex       *exporter // nil until the exporter has templates
	version  uint16
	domain   uint32
	clk      clock
	exportMs int64  // v9: header wall clock in ms
	uptime   uint32 // v9: header sysUptime in ms

	// initMs is the domain's systemInitTimeMilliseconds (IPFIX), the
	// base of flowEndSysUpTime; 0 when unknown. Loaded on first need.
	initMs     int64
	initLoaded bool

	// A small cache of this datagram's template lookups: softflowd
	// sends one record per set, so the same two or three templates are
	// looked up twenty times per datagram.
	cacheKeys  [4]uint64
	cachePlans [4]*plan
	cacheNext  int
}

// plan returns the template for a data set id, or nil when unknown.
func (m *msg) plan(id uint16) *plan {
	key := tkey(m.version, m.domain, id)
	for i, p := range m.cachePlans {
		if p != nil && m.cacheKeys[i] == key {
			return p
		}
	}
	if m.ex == nil {
		return nil
	}
	m.ex.mu.RLock()
	p := m.ex.plans[key].plan
	m.ex.mu.RUnlock()
	if p != nil {
		i := m.cacheNext % len(m.cachePlans)
		m.cacheKeys[i], m.cachePlans[i] = key, p
		m.cacheNext++
	}
	return p
}

// forget empties the lookup cache after a template changed.
func (m *msg) forget() { m.cachePlans = [4]*plan{} }

// init returns the domain's systemInitTimeMilliseconds, 0 if unknown.
func (m *msg) init() int64 {
	if !m.initLoaded && m.ex != nil {
		m.ex.mu.RLock()
		m.initMs = m.ex.inits[m.domain]
		m.ex.mu.RUnlock()
	}
	m.initLoaded = true
	return m.initMs
}

// dataSet decodes one data set (id >= 256).
func (d *Decoder) dataSet(m *msg, id uint16, body []byte, out []record.Flow, res *Result) ([]record.Flow, error) {
	p := m.plan(id)
	if p == nil {
		res.MissingTemplate++
		return out, nil
	}
	if p.options {
		// Options data is metadata (sampling, interface names ...),
		// not flows. Only systemInitTimeMilliseconds is kept: IPFIX
		// exporters that count time in uptime (softflowd) send it here.
		res.SkippedSets++
		if p.at[tInit].n != 0 {
			var at [nTargets]ref
			if n, err := nextRecord(body, p, &at); err == nil && n > 0 {
				if v := int64(uintN(body[at[tInit].off:][:at[tInit].n])); v > 0 {
					d.setInit(m, v)
				}
			}
		}
		return out, nil
	}
	if p.steps == nil {
		// Fixed layout, the common case: offsets are known, and what
		// is left after the last whole record is padding.
		rl := p.recLen
		for len(body) >= rl {
			out = append(out, m.flow(body[:rl], &p.at, p.endKind))
			body = body[rl:]
		}
		return out, nil
	}
	var at [nTargets]ref
	for len(body) >= p.recLen {
		n, err := nextRecord(body, p, &at)
		if err != nil {
			return out, err
		}
		out = append(out, m.flow(body[:n], &at, p.endKind))
		body = body[n:]
	}
	return out, nil
}

// nextRecord measures the record at the start of body and fills at with
// its field offsets. A variable-length field has a one-byte length, or
// 255 and a two-byte length (RFC 7011 §7). A record running past its set
// is an error: padding is shorter than the shortest record (§3.3.1), so
// callers only call this when a whole record could fit.
func nextRecord(body []byte, p *plan, at *[nTargets]ref) (int, error) {
	if p.steps == nil {
		if len(body) < p.recLen {
			return 0, nil
		}
		*at = p.at
		return p.recLen, nil
	}
	q := 0
	for _, s := range p.steps {
		l := int(s.length)
		if s.length == varLength {
			if q >= len(body) {
				return 0, fmt.Errorf("%w: template %d record overruns its set", ErrMalformed, p.tmpl.ID)
			}
			l = int(body[q])
			q++
			if l == 255 {
				if q+2 > len(body) {
					return 0, fmt.Errorf("%w: template %d record overruns its set", ErrMalformed, p.tmpl.ID)
				}
				l = int(be16(body[q:]))
				q += 2
			}
		}
		if s.target >= 0 {
			at[s.target] = ref{off: uint32(q), n: uint8(l)}
		}
		q += l
		if q > len(body) {
			return 0, fmt.Errorf("%w: template %d record overruns its set", ErrMalformed, p.tmpl.ID)
		}
	}
	return q, nil
}

// flow builds one flow from a record whose field offsets are at.
func (m *msg) flow(r []byte, at *[nTargets]ref, endKind int) record.Flow {
	f := record.Flow{
		Exporter: m.exporter,
		Src:      addr(r, at[tSrc4], at[tSrc6]),
		Dst:      addr(r, at[tDst4], at[tDst6]),
		SrcPort:  uint16(value(r, at[tSrcPort])),
		DstPort:  uint16(value(r, at[tDstPort])),
		Proto:    uint8(value(r, at[tProto])),
		Packets:  value(r, at[tPackets]),
		Octets:   value(r, at[tOctets]),
	}
	f.TS = m.ts(r, at, endKind)
	return f
}

// value reads an integer field, 0 when the template lacks it.
func value(r []byte, a ref) uint64 {
	if a.n == 0 {
		return 0
	}
	return uintN(r[a.off:][:a.n])
}

// addr picks the flow's address: IPv4 when the template has it and it is
// set, else IPv6. Templates carrying both (one of them zero) exist.
func addr(r []byte, a4, a6 ref) netip.Addr {
	if a4.n != 0 {
		b := [4]byte(r[a4.off:][:4])
		if a6.n == 0 || b != [4]byte{} {
			return netip.AddrFrom4(b)
		}
	}
	if a6.n != 0 {
		return netip.AddrFrom16([16]byte(r[a6.off:][:16]))
	}
	return netip.Addr{}
}

// ntpEpoch is 1900-01-01 in Unix seconds, the origin of the NTP
// timestamps of flowEndMicroseconds and flowEndNanoseconds.
const ntpEpoch = -2208988800

// ts is the flow's end time in Unix seconds, from whatever clock the
// template offers, else the export time, else the receive time.
func (m *msg) ts(r []byte, at *[nTargets]ref, endKind int) int64 {
	v := value(r, at[tEnd])
	switch endKind {
	case endMillis:
		return m.clk.settle(int64(v / 1000))
	case endSeconds:
		return m.clk.settle(int64(v))
	case endNTP:
		return m.clk.settle(int64(v>>32) + ntpEpoch)
	case endDeltaMics:
		if m.clk.exportOK {
			return m.clk.settle(floorDiv(m.clk.export*1e6-int64(v), 1e6))
		}
	case endUptime:
		if m.version == 9 {
			if m.clk.exportOK {
				return m.clk.settle(uptimeTS(m.exportMs, m.uptime, uint32(v)))
			}
			break
		}
		// IPFIX has no uptime in its header: flowEndSysUpTime counts
		// from systemInitTimeMilliseconds, in the record or sent as
		// options data. Without it the export time is the best guess.
		base := m.init()
		if at[tInit].n != 0 {
			base = int64(value(r, at[tInit]))
		}
		if base > 0 {
			return m.clk.settle(floorDiv(base+int64(v), 1000))
		}
	}
	return m.clk.fallback()
}
