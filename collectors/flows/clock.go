package flows

import (
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/store/record"
)

// Flow records whose time is further than ClockBehind before, or
// ClockAhead after, the moment their datagram arrived come from an
// exporter replaying a capture or with a wrong clock: stored at their own
// time they would fall outside every window the console and the API read
// (and be pruned as soon as written). They are placed at their receive
// time instead, and counted per exporter with how far off they were, so
// that an operator sees "240 flows received with timestamps 14 days in the
// past" rather than traffic that silently went nowhere. A flow's time is
// its end; active timeouts are at most 30 minutes on common exporters,
// hence an hour behind.
const (
	DefaultClockBehind = time.Hour
	DefaultClockAhead  = 5 * time.Minute
)

// exporterState is what the collector knows of one exporter since start
// (GET /api/v1/flows/exporters). Atomics: workers update it per datagram.
type exporterState struct {
	flows, lastSeen atomic.Int64
	// retimed counts the records placed at their receive time; offset is
	// the last one's receive time less its own time, seconds (positive:
	// in the past), retimedAt when it arrived.
	retimed, offset, retimedAt atomic.Int64
}

// ExporterStatus is one exporter of Collector.Exporters.
type ExporterStatus struct {
	Exporter string `json:"exporter"`
	// Flows are the records received from it since the hub started.
	Flows int64 `json:"flows"`
	// LastSeen is when its last datagram with records arrived, Unix seconds.
	LastSeen int64 `json:"last_seen"`
	// Retimed counts its records whose time was implausible (more than
	// an hour before or five minutes after their arrival), placed at
	// their receive time instead.
	Retimed int64 `json:"retimed"`
	// OffsetSeconds is how far off the last retimed record was: its
	// receive time less its own, positive when in the past (0 when none).
	OffsetSeconds int64 `json:"offset_seconds"`
	// RetimedAt is when the last retimed record arrived (0 when none).
	RetimedAt int64 `json:"retimed_at"`
}

// retime places the records of one datagram whose time is implausible at
// the datagram's receive time, and updates the exporter's state.
func (c *Collector) retime(st *exporterState, fs []record.Flow, at time.Time) {
	now := at.Unix()
	behind, ahead := int64(c.cfg.ClockBehind/time.Second), int64(c.cfg.ClockAhead/time.Second)
	var n, off int64
	for i := range fs {
		d := now - fs[i].TS
		if (behind > 0 && d > behind) || (ahead > 0 && -d > ahead) {
			off = d
			fs[i].TS = now
			n++
		}
	}
	if st != nil {
		st.flows.Add(int64(len(fs)))
		st.lastSeen.Store(now)
	}
	if n == 0 {
		return
	}
	dir := "past"
	if off < 0 {
		dir = "future"
	}
	c.m.retimed.WithLabelValues(dir).Add(float64(n))
	if st != nil {
		st.retimed.Add(n)
		st.offset.Store(off)
		st.retimedAt.Store(now)
	}
}

// Exporters lists the exporters seen since start, by address (at most
// MaxExporterSeries; the rest are counted in the metrics only).
func (c *Collector) Exporters() []ExporterStatus {
	c.m.exportersMu.RLock()
	out := make([]ExporterStatus, 0, len(c.m.byExporter))
	for a, ec := range c.m.byExporter {
		s := ec.state
		out = append(out, ExporterStatus{Exporter: a.String(), Flows: s.flows.Load(), LastSeen: s.lastSeen.Load(),
			Retimed: s.retimed.Load(), OffsetSeconds: s.offset.Load(), RetimedAt: s.retimedAt.Load()})
	}
	c.m.exportersMu.RUnlock()
	slices.SortFunc(out, func(a, b ExporterStatus) int {
		x, _ := netip.ParseAddr(a.Exporter)
		y, _ := netip.ParseAddr(b.Exporter)
		return x.Compare(y)
	})
	return out
}

func newRetimed() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_flow_records_retimed_total",
		Help: "Flow records whose time was more than an hour before (past) or five minutes after (future) their arrival (a replayed capture, a wrong exporter clock), stored at their receive time instead; by direction."}, []string{"direction"})
}
