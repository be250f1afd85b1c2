package intake

import (
	"strings"
	"unicode/utf8"

	"netmon/agentmode/wire"
	"netmon/store/record"
)

// Rate is one interface's rates in the agent list (spec 2.9 rates[]).
type Rate struct {
	Name      string  `json:"name"`
	RxBps     float64 `json:"rx_bps" doc:"bits per second received"`
	TxBps     float64 `json:"tx_bps" doc:"bits per second sent"`
	PPS       float64 `json:"pps" doc:"packets per second, both directions"`
	RxBytes   uint64  `json:"rx_bytes" doc:"cumulative counter as reported"`
	TxBytes   uint64  `json:"tx_bytes"`
	RxPackets uint64  `json:"rx_packets"`
	TxPackets uint64  `json:"tx_packets"`
	SpeedMbps int64   `json:"speed_mbps" doc:"link speed the agent reported, 0 when unknown; the iface_util rule judges rx_bps/tx_bps against it"`
}

// maxByteRate bounds a plausible interface rate (bytes/s, 800 Gbit/s): a
// larger delta is a counter reset or a misreport, not traffic.
const maxByteRate = 100e9

// rates computes per-interface rates between the previous batch and t,
// and the summed in/out/local/pps of the history sample. Counters are
// cumulative: a counter that went down from the upper half of the 32-bit
// range wrapped; any other fall is a reset (reboot, driver reload), which
// yields no rate for that interval rather than a negative or absurd one.
func rates(st *agentState, t *Batch, rec *record.Telemetry) ([]Rate, map[string]wire.Interface, []ifDelta) {
	counters := make(map[string]wire.Interface, len(t.Interfaces))
	out := make([]Rate, 0, len(t.Interfaces))
	var deltas []ifDelta
	dt := float64(t.TS - st.ts)
	usable := st.ts > 0 && dt > 0 && dt <= 7*86400
	for i := range t.Interfaces {
		cur := t.Interfaces[i]
		cur.Name = clip(cur.Name, 64)
		t.Interfaces[i].Name = cur.Name
		counters[cur.Name] = cur
		r := Rate{Name: cur.Name, RxBytes: cur.RxBytes, TxBytes: cur.TxBytes, RxPackets: cur.RxPackets, TxPackets: cur.TxPackets,
			SpeedMbps: speedMbps(cur.SpeedMbps)}
		prev, seen := st.counters[cur.Name]
		if usable && seen {
			// Each counter is judged alone: one that reset gives no rate,
			// the others still do.
			loop := isLoopback(cur.Name)
			d := ifDelta{name: cur.Name}
			if rx, ok := delta(cur.RxBytes, prev.RxBytes); ok && float64(rx)/dt <= maxByteRate {
				d.rx = rx
				r.RxBps = float64(rx) * 8 / dt
				if loop {
					rec.Local += float64(rx) / dt
				} else {
					rec.In += float64(rx) / dt
				}
				rec.HasRates = true
			}
			if tx, ok := delta(cur.TxBytes, prev.TxBytes); ok && float64(tx)/dt <= maxByteRate {
				d.tx = tx
				r.TxBps = float64(tx) * 8 / dt
				if !loop {
					rec.Out += float64(tx) / dt
				}
				rec.HasRates = true
			}
			rp, ok1 := delta(cur.RxPackets, prev.RxPackets)
			tp, ok2 := delta(cur.TxPackets, prev.TxPackets)
			if ok1 && ok2 && float64(rp+tp)/dt <= maxByteRate/64 {
				d.rxp, d.txp = rp, tp
				r.PPS = float64(rp+tp) / dt
				if !loop {
					rec.PPS += r.PPS
				}
			}
			deltas = append(deltas, d)
		}
		out = append(out, r)
	}
	return out, counters, deltas
}

// maxSpeedMbps bounds a reported link speed (1.6 Tbit/s): past it the
// value is a misreport, kept as unknown rather than hiding every alert.
const maxSpeedMbps = 1_600_000

func speedMbps(v int64) int64 {
	if v <= 0 || v > maxSpeedMbps {
		return 0
	}
	return v
}

// ifDelta is what one interface's counters moved since the last batch
// (0 for a counter that reset).
type ifDelta struct {
	name             string
	rx, tx, rxp, txp uint64
}

// delta is cur-prev for a cumulative counter; ok is false on a reset.
func delta(cur, prev uint64) (uint64, bool) {
	if cur >= prev {
		return cur - prev, true
	}
	// A 32-bit counter wraps from its upper half; a fall from lower down
	// (or of a 64-bit value) is a reset.
	if prev >= 1<<31 && prev < 1<<32 && cur < 1<<32 {
		return (1<<32 - prev) + cur, true
	}
	return 0, false
}

// isLoopback recognises the loopback interface names of Linux (lo),
// macOS/BSD (lo0) and Windows ("Loopback Pseudo-Interface 1").
func isLoopback(name string) bool {
	if name == "lo" || strings.Contains(strings.ToLower(name), "loopback") {
		return true
	}
	if strings.HasPrefix(name, "lo") && len(name) > 2 {
		for _, c := range name[2:] {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	return false
}

func attrMethod(m string) string {
	switch m {
	case "ebpf", "pcap", "etw", "off":
		return m
	}
	return "off"
}

// clip bounds a text field and makes it valid UTF-8.
func clip(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
