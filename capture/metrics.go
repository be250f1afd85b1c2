package capture

import (
	"github.com/prometheus/client_golang/prometheus"

	"netmon/capture/source"
)

// Collector returns the capture's Prometheus metrics, read from one
// snapshot per scrape; app/hub registers it like the collectors' metrics.
// The totals are the current capture's (they restart at each capture
// start, which Prometheus' rate() reads as a counter reset).
func (c *Capture) Collector() prometheus.Collector { return collector{c} }

var (
	descRunning      = prometheus.NewDesc("netmon_capture_running", "1 while the hub-local capture runs, by device.", []string{"device"}, nil)
	descPackets      = prometheus.NewDesc("netmon_capture_packets_total", "Packets the hub-local capture counted since it started.", []string{"device"}, nil)
	descBytes        = prometheus.NewDesc("netmon_capture_bytes_total", "Bytes the hub-local capture counted since it started.", []string{"device"}, nil)
	descDropped      = prometheus.NewDesc("netmon_capture_kernel_drops_total", "Packets the kernel dropped before the capture read them (its ring was full), since it started.", []string{"device"}, nil)
	descDecodeErrors = prometheus.NewDesc("netmon_capture_decode_errors_total", "Frames with a layer that failed to decode (still counted), by kind (frame, dns), since the capture started.", []string{"device", "kind"}, nil)
	descFreezes      = prometheus.NewDesc("netmon_capture_ring_freezes_total", "Times the kernel froze the capture ring because every block was full (Linux), since the capture started.", []string{"device"}, nil)
	descEvicted      = prometheus.NewDesc("netmon_capture_table_evictions_total", "Entries dropped from a full table of the stats engine, by table (endpoints, domains), since the capture started.", []string{"device", "table"}, nil)
)

type collector struct{ c *Capture }

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRunning, descPackets, descBytes, descDropped, descFreezes, descDecodeErrors, descEvicted} {
		ch <- d
	}
}

func (k collector) Collect(ch chan<- prometheus.Metric) {
	s := k.c.Snapshot()
	running := 0.0
	if s.Running {
		running = 1
	}
	ch <- prometheus.MustNewConstMetric(descRunning, prometheus.GaugeValue, running, s.Device)
	ch <- prometheus.MustNewConstMetric(descPackets, prometheus.CounterValue, float64(s.TotalPackets), s.Device)
	ch <- prometheus.MustNewConstMetric(descBytes, prometheus.CounterValue, float64(s.TotalBytes), s.Device)
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(s.Dropped), s.Device)
	h, st := k.c.counters()
	ch <- prometheus.MustNewConstMetric(descFreezes, prometheus.CounterValue, float64(st.Freezes), s.Device)
	ch <- prometheus.MustNewConstMetric(descDecodeErrors, prometheus.CounterValue, float64(h.DecodeErrors), s.Device, "frame")
	ch <- prometheus.MustNewConstMetric(descDecodeErrors, prometheus.CounterValue, float64(h.DNSErrors), s.Device, "dns")
	ch <- prometheus.MustNewConstMetric(descEvicted, prometheus.CounterValue, float64(h.EndpointsEvicted), s.Device, "endpoints")
	ch <- prometheus.MustNewConstMetric(descEvicted, prometheus.CounterValue, float64(h.DomainsEvicted), s.Device, "domains")
}

// counters returns the engine's health counters and the running source's
// kernel counters (zero before the first capture, or while stopped).
func (c *Capture) counters() (Counters, source.Stats) {
	c.mu.Lock()
	e, src, running := c.engine, c.src, c.running
	c.mu.Unlock()
	var h Counters
	if e != nil {
		h = e.Counters()
	}
	var st source.Stats
	if running && src != nil {
		st, _ = src.Stats()
	}
	return h, st
}
