package capture

import "github.com/prometheus/client_golang/prometheus"

// Collector returns the capture's Prometheus metrics, read from one
// snapshot per scrape. The totals are the current capture's (they restart
// at each capture start, which Prometheus' rate() reads as a counter
// reset).
func (c *Capture) Collector() prometheus.Collector { return collector{c} }

var (
	descRunning = prometheus.NewDesc("netmon_capture_running", "1 while the hub-local capture runs, by device.", []string{"device"}, nil)
	descPackets = prometheus.NewDesc("netmon_capture_packets_total", "Packets the hub-local capture counted since it started.", []string{"device"}, nil)
	descBytes   = prometheus.NewDesc("netmon_capture_bytes_total", "Bytes the hub-local capture counted since it started.", []string{"device"}, nil)
	descDropped = prometheus.NewDesc("netmon_capture_kernel_drops_total", "Packets the kernel dropped before the capture read them, since it started.", []string{"device"}, nil)
)

type collector struct{ c *Capture }

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRunning, descPackets, descBytes, descDropped} {
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
}
