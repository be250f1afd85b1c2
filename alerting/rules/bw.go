package rules

import "fmt"

// BW is the bw rule: the capture's in or out rate over its threshold for
// Seconds consecutive evaluations (one a second). It fires once the run
// reaches Seconds and again every second the run lasts (the engine counts
// those as repeats).
type BW struct {
	run int
}

// BWConfig is the rule's part of the alert settings.
type BWConfig struct {
	InMbps, OutMbps float64
	Seconds         int
}

// Eval judges one second of traffic.
func (r *BW) Eval(t Traffic, cfg BWConfig) (Alert, bool) {
	inOver := cfg.InMbps > 0 && t.InBps > cfg.InMbps*1e6
	outOver := cfg.OutMbps > 0 && t.OutBps > cfg.OutMbps*1e6
	if !t.Running || (!inOver && !outOver) {
		r.run = 0
		return Alert{}, false
	}
	r.run++
	need := max(cfg.Seconds, 1)
	if r.run < need {
		return Alert{}, false
	}
	dir, rate, limit := "in", t.InBps, cfg.InMbps
	if !inOver {
		dir, rate, limit = "out", t.OutBps, cfg.OutMbps
	}
	return Alert{
		Kind: KindBandwidth, Key: "hub|" + dir, Severity: SeverityBW,
		Message: fmt.Sprintf("bandwidth %s %.1f Mbit/s over %.1f Mbit/s for %d s", dir, rate/1e6, limit, r.run),
	}, true
}
