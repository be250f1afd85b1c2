package snmp

import (
	"netmon/store/record"
)

// prevIface is what the rate of the next poll needs of an interface.
type prevIface struct {
	in, out uint64
	hc      bool
}

// prevPoll is a device's previous successful poll.
type prevPoll struct {
	at     float64 // Unix seconds (monotonic-derived) of the poll
	uptime uint32  // sysUpTime, centiseconds
	ifaces map[int]prevIface
	cpu    cpuTicks
}

// maxBitsPerSecond bounds a rate without a trusted speed: above it a
// delta is a counter reset, not traffic (1.6 Tbit/s).
const maxBitsPerSecond = 1.6e12

// applyRates sets the rates and utilisation of cur from prev. A counter
// regression is a reboot or a wrap: with sysUpTime lower than before (a
// reboot; sysUpTime's own 497-day wrap excepted) no rate is given; a
// 32-bit counter that went back once is unwrapped; a 64-bit one that went
// back is a reset. A rate over the interface's speed (+10%), or over
// maxBitsPerSecond without one, is refused too. Refused rates are 0 with
// no utilisation: never a negative or absurd spike.
func applyRates(prev *prevPoll, at float64, uptime uint32, ifs []rawIface) {
	if prev == nil {
		return
	}
	dt := at - prev.at
	if dt <= 0 {
		return
	}
	rebooted := uptime < prev.uptime && !uptimeWrapped(prev.uptime, uptime, dt)
	for i := range ifs {
		s := &ifs[i].sample
		p, ok := prev.ifaces[s.IfIndex]
		if !ok || rebooted || p.hc != ifs[i].hc {
			continue
		}
		rx, okRx := delta(p.in, s.InOctets, ifs[i].hc)
		tx, okTx := delta(p.out, s.OutOctets, ifs[i].hc)
		if !okRx || !okTx {
			continue
		}
		rxBps, txBps := float64(rx)/dt, float64(tx)/dt
		limit := maxBitsPerSecond
		if s.SpeedBps > 0 {
			limit = float64(s.SpeedBps) * 1.1
		}
		if rxBps*8 > limit || txBps*8 > limit {
			continue
		}
		s.RxBps, s.TxBps = rxBps, txBps
		if s.SpeedBps > 0 && s.OperUp {
			s.RxUtilPct = ptr(min(100, 100*rxBps*8/float64(s.SpeedBps)))
			s.TxUtilPct = ptr(min(100, 100*txBps*8/float64(s.SpeedBps)))
		}
	}
}

// delta is cur-prev of a counter; a 32-bit counter that went back is
// unwrapped once, a 64-bit one that went back is refused.
func delta(prev, cur uint64, hc bool) (uint64, bool) {
	if cur >= prev {
		return cur - prev, true
	}
	if !hc && prev < 1<<32 {
		return cur + (1 << 32) - prev, true
	}
	return 0, false
}

// uptimeWrapped tells a sysUpTime wrap (2^32 centiseconds, 497 days)
// from a reboot: before the wrap it was within the interval of the top.
func uptimeWrapped(prev, cur uint32, dt float64) bool {
	gap := uint64(1<<32) - uint64(prev) + uint64(cur)
	return float64(gap) <= (dt+5)*100
}

// remember keeps what the next poll's rates need.
func remember(at float64, uptime uint32, ifs []rawIface, cpu cpuTicks) *prevPoll {
	p := &prevPoll{at: at, uptime: uptime, ifaces: make(map[int]prevIface, len(ifs)), cpu: cpu}
	for _, f := range ifs {
		p.ifaces[f.sample.IfIndex] = prevIface{in: f.sample.InOctets, out: f.sample.OutOctets, hc: f.hc}
	}
	return p
}

// samples returns the record samples of ifs stamped ts.
func samples(dev, ts int64, ifs []rawIface) []record.IfaceSample {
	out := make([]record.IfaceSample, len(ifs))
	for i, f := range ifs {
		out[i] = f.sample
		out[i].DeviceID, out[i].TS = dev, ts
	}
	return out
}
