package reports

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	generated    *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	runs         *prometheus.CounterVec
	archiveBytes prometheus.Gauge
	archiveCount prometheus.Gauge
}

// Outcomes of a scheduled run (netmon_report_schedule_runs_total).
const (
	outcomeSent        = "sent"          // generated, archived and mailed
	outcomeNoRecipient = "not_mailed"    // generated and archived, nobody to mail
	outcomeMailFailed  = "mail_failed"   // archived, the mail failed (its delivery says why)
	outcomeFailed      = "failed"        // not generated (build, render or store error)
	outcomeSkipped     = "claimed_other" // the slot was claimed by another hub or run
)

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		generated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_reports_generated_total", Help: "Reports generated (on request or by a schedule), by type and format.",
		}, []string{"type", "format"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "netmon_report_generate_seconds",
			Help:    "Time to build and render a report, by format.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30},
		}, []string{"format"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_report_schedule_runs_total", Help: "Scheduled report runs, by outcome (sent, not_mailed, mail_failed, failed, claimed_other).",
		}, []string{"outcome"}),
		archiveBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "netmon_report_archive_bytes", Help: "Total size of the archived reports.",
		}),
		archiveCount: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "netmon_report_archive_reports", Help: "Number of archived reports.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.generated, m.duration, m.runs, m.archiveBytes, m.archiveCount)
	}
	return m
}
