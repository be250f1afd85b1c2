package reports

import (
	"cmp"
	"context"
	"errors"
	"math"
	"net/netip"
	"slices"
	"sync"

	"netmon/alerting/health"
	"netmon/store"
)

// reportCritSeverity is the severity (0-10, CEF) from which an alert event is
// critical: the health score's threshold (alerting/health).
const reportCritSeverity = 8

// reportFacts are the figures of a traffic or enterprise report, read once:
// the summary, the sections and the recommendations print them. A nil
// pointer is a missing source.
type reportFacts struct {
	p reportPeriod

	// traffic: nil without a source.
	traffic *trafficFacts

	destinations *destFacts
	procs, dns   *store.ReportTop
	apps         *store.ReportTop
	protocols    *store.ReportTop
	convs        *store.ReportTop

	alerts *alertFacts

	sla      *SLAFigures
	health   *health.NetworkHealth
	ai       []AIAnalysis
	aiSource bool
}

// trafficFacts is the traffic of the period by day and its figures.
type trafficFacts struct {
	minutes        int // minutes with traffic
	rx, tx         float64
	prevRx, prevTx float64
	// dayRx, dayTx are per period day.
	dayRx, dayTx []float64
	// p50, p95, p99 and max of the per-minute throughput (bit/s).
	p50, p95, p99, max float64
}

func (t *trafficFacts) total() float64     { return t.rx + t.tx }
func (t *trafficFacts) prevTotal() float64 { return t.prevRx + t.prevTx }

// busiest is the index of the period's busiest day (the first on a tie).
func (t *trafficFacts) busiest() int {
	best := 0
	for i := range t.dayRx {
		if t.dayRx[i]+t.dayTx[i] > t.dayRx[best]+t.dayTx[best] {
			best = i
		}
	}
	return best
}

// growth is the change in % on the previous period; ok is false when the
// previous period had no traffic.
func (t *trafficFacts) growth() (pct float64, ok bool) {
	if t.prevTotal() <= 0 {
		return 0, false
	}
	return (t.total() - t.prevTotal()) / t.prevTotal() * 100, true
}

// keyBytes is a country's or an ASN's bytes.
type keyBytes struct {
	key   string
	bytes int64
}

// destFacts is the busiest destinations by country and by ASN.
type destFacts struct {
	// addrs is how many addresses were mapped, of total (at least total
	// when atLeast: a rolled-up day kept only its busiest, store.ReportTop).
	addrs, total int
	atLeast      bool
	countries    []keyBytes
	asns         []keyBytes
	geo          bool
}

// alertFacts is the period's alert events.
type alertFacts struct {
	kinds, severities, keys *store.ReportTop
	events                  int64
	unackedCrit             int64
	incidents               *store.ReportTop
	lowUptime               *store.ReportTop
}

// gather reads every source of a traffic (or enterprise) report. The
// reads are independent: they run concurrently (bounded by the
// database's reader pool), each filling its own field.
func (b *Builder) gather(ctx context.Context, p reportPeriod, enterprise bool) (*reportFacts, error) {
	f := &reportFacts{p: p}
	d := b.deps
	var tasks []func() error
	add := func(fn func() error) { tasks = append(tasks, fn) }
	if d.Traffic != nil {
		add(func() (err error) { f.traffic, err = b.trafficOf(ctx, p); return err })
	}
	if d.Flows != nil {
		add(func() (err error) { f.destinations, err = b.destinationsOf(ctx, p); return err })
		add(func() (err error) { f.protocols, err = topOf(d.Flows.ReportProtocols(ctx, p.cur, topN)); return err })
		if enterprise {
			add(func() (err error) {
				f.convs, err = topOf(d.Flows.ReportConversations(ctx, p.cur, topConversations))
				return err
			})
		}
	}
	if d.Deep != nil {
		add(func() (err error) { f.procs, err = topOf(d.Deep.ReportProcesses(ctx, p.cur, topN)); return err })
		add(func() (err error) { f.dns, err = topOf(d.Deep.ReportDNS(ctx, p.cur, topN)); return err })
		if enterprise {
			add(func() (err error) { f.apps, err = topOf(d.Deep.ReportApplications(ctx, p.cur, topN)); return err })
		}
	}
	if d.Alerts != nil {
		add(func() (err error) { f.alerts, err = b.alertsOf(ctx, p, enterprise); return err })
	}
	if d.AI != nil {
		f.aiSource = true
		add(func() (err error) {
			f.ai, err = d.AI.LatestAnalyses(ctx, p.cur.Site, p.from, p.to, aiAnalyses)
			return err
		})
	}
	if enterprise && d.SLA != nil {
		add(func() error {
			s, err := d.SLA.Figures(ctx, p.cur.Site, p.from, p.to)
			f.sla = &s
			return err
		})
	}
	if enterprise && d.Health != nil {
		add(func() error {
			h, err := d.Health.Score(ctx, p.cur.Site)
			f.health = &h
			return err
		})
	}
	if err := runAll(ctx, tasks); err != nil {
		return nil, err
	}
	// The agents reporting least are read only when the SLA's agent
	// uptime calls for a recommendation naming them.
	if f.alerts != nil && f.sla != nil && f.sla.Agents > 0 && f.sla.AgentUptimePct < minAgentUptimePct {
		var err error
		if f.alerts.lowUptime, err = topOf(d.Alerts.ReportAgentUptime(ctx, p.cur, maxNamedAgents)); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// runAll runs tasks concurrently and returns their errors joined.
func runAll(ctx context.Context, tasks []func() error) error {
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, fn := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ctx.Err() == nil {
				errs[i] = fn()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// topOf passes a top read through as a pointer.
func topOf(t store.ReportTop, err error) (*store.ReportTop, error) {
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// trafficOf reads the period's minutes (one row a minute, summed in SQL)
// and folds them into days and percentiles.
func (b *Builder) trafficOf(ctx context.Context, p reportPeriod) (*trafficFacts, error) {
	t := &trafficFacts{dayRx: make([]float64, len(p.days)), dayTx: make([]float64, len(p.days))}
	var ms []store.ReportMinute
	err := runAll(ctx, []func() error{
		func() (err error) { ms, err = b.deps.Traffic.ReportTrafficMinutes(ctx, p.cur); return err },
		func() (err error) {
			t.prevRx, t.prevTx, err = b.deps.Traffic.ReportTrafficTotal(ctx, p.prev)
			return err
		},
	})
	if err != nil {
		return nil, err
	}
	t.minutes = len(ms)
	rates := make([]float64, 0, len(ms))
	day := 0
	for _, m := range ms {
		// The minutes are in order: advance to the day holding m.
		for day+1 < len(p.days) && m.TS >= p.days[day+1].Unix() {
			day++
		}
		t.dayRx[day] += m.RxByte
		t.dayTx[day] += m.TxByte
		t.rx += m.RxByte
		t.tx += m.TxByte
		rates = append(rates, (m.RxByte+m.TxByte)*8/60)
	}
	slices.Sort(rates)
	t.p50, t.p95, t.p99 = nearestRank(rates, 50), nearestRank(rates, 95), nearestRank(rates, 99)
	if len(rates) > 0 {
		t.max = rates[len(rates)-1]
	}
	return t, nil
}

// nearestRank is the p-th percentile of sorted by the nearest-rank
// method (a value that occurred, never an interpolation).
func nearestRank(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// destinationsOf maps the busiest destination addresses to countries and
// ASNs.
func (b *Builder) destinationsOf(ctx context.Context, p reportPeriod) (*destFacts, error) {
	t, err := b.deps.Flows.ReportDestinations(ctx, p.cur, destCandidates)
	if err != nil {
		return nil, err
	}
	d := &destFacts{addrs: len(t.Rows), total: t.Total, atLeast: t.AtLeast, geo: b.deps.Geo != nil}
	if !d.geo {
		return d, nil
	}
	countries, asns := map[string]int64{}, map[string]int64{}
	for _, r := range t.Rows {
		country, asn := "", ""
		if a, err := netip.ParseAddr(r.Keys[0]); err == nil {
			country, asn, _ = b.deps.Geo.Lookup(a)
		}
		if country == "" {
			country = "unknown"
		}
		if asn == "" {
			asn = "unknown"
		}
		countries[country] += r.Sums[0]
		asns[asn] += r.Sums[0]
	}
	d.countries, d.asns = ranked(countries), ranked(asns)
	return d, nil
}

// ranked orders a map's keys by bytes, most first, ties by key.
func ranked(m map[string]int64) []keyBytes {
	out := make([]keyBytes, 0, len(m))
	for k, v := range m {
		out = append(out, keyBytes{k, v})
	}
	slices.SortFunc(out, func(a, b keyBytes) int {
		if c := cmp.Compare(b.bytes, a.bytes); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	return out
}

// alertsOf reads the period's alert events (and, for an enterprise
// report, the open incidents and the agents reporting least).
func (b *Builder) alertsOf(ctx context.Context, p reportPeriod, enterprise bool) (*alertFacts, error) {
	a := &alertFacts{}
	src := b.deps.Alerts
	var err error
	if a.kinds, err = topOf(src.ReportAlertKinds(ctx, p.cur, topN)); err != nil {
		return nil, err
	}
	if a.severities, err = topOf(src.ReportAlertSeverities(ctx, p.cur)); err != nil {
		return nil, err
	}
	for _, r := range a.severities.Rows {
		a.events += r.Sums[0]
	}
	if a.keys, err = topOf(src.ReportAlertKeys(ctx, p.cur, topN)); err != nil {
		return nil, err
	}
	if !enterprise {
		return a, nil
	}
	if a.unackedCrit, err = src.ReportUnacked(ctx, p.cur, reportCritSeverity); err != nil {
		return nil, err
	}
	if a.incidents, err = topOf(src.ReportOpenIncidents(ctx, p.cur, topN)); err != nil {
		return nil, err
	}
	return a, nil
}
