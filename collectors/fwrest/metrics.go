package fwrest

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/netguard"
)

// endpointNames are the endpoints a poll reads, in order (Poll's steps):
// the label values of requests_total, a fixed set.
var endpointNames = []string{"status", "resources", "interfaces", "vpn_ipsec", "vpn_ssl", "sdwan", "policies"}

// Reasons a request fails (request_errors_total), a fixed set.
const (
	reasonTimeout    = "timeout"     // the request's or the poll's time ran out
	reasonTLS        = "tls"         // certificate refused, or the handshake failed
	reasonRefused    = "refused"     // nothing listens (connection refused)
	reasonGuard      = "guard"       // the outbound guard refused the address
	reasonHTTPStatus = "http_status" // an answer other than 200 (401, 403, 404...)
	reasonTooLarge   = "too_large"   // a body over MaxBody
	reasonDecode     = "decode"      // not the monitor API's JSON, or a status other than success
	reasonOther      = "other"       // anything else (DNS, reset, the hub stopping...)
)

var errorReasons = []string{reasonTimeout, reasonTLS, reasonRefused, reasonGuard, reasonHTTPStatus, reasonTooLarge, reasonDecode, reasonOther}

// metrics of the scheduled polls' requests: per endpoint, failed ones
// per reason, and the time requests were held back by the per-device
// spacing. Polls, their duration and the devices scheduled are the
// device component's, labelled driver="fwrest". The probe (POST
// /api/v1/devices/probe) is not counted: its clients have no metrics.
// No label comes from a device.
type metrics struct {
	requests *prometheus.CounterVec // endpoint: endpointNames
	errors   *prometheus.CounterVec // reason: errorReasons
	pacing   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_fwrest_requests_total",
			Help: "Monitor API requests attempted, by endpoint (each one either answered or counted in netmon_fwrest_request_errors_total)."}, []string{"endpoint"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_fwrest_request_errors_total",
			Help: "Monitor API requests that failed, by reason (timeout, tls, refused, guard, http_status, too_large, decode, other)."}, []string{"reason"}),
		pacing: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_fwrest_pacing_wait_seconds_total",
			Help: "Time requests waited for the 150 ms spacing between two requests to one device."}),
	}
	for _, e := range endpointNames {
		m.requests.WithLabelValues(e)
	}
	for _, r := range errorReasons {
		m.errors.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.errors, m.pacing)
	}
	return m
}

// request counts a request to endpoint (nil m: a probe's client).
func (m *metrics) request(endpoint string) {
	if m != nil {
		m.requests.WithLabelValues(endpoint).Inc()
	}
}

// failed counts a failed request.
func (m *metrics) failed(reason string) {
	if m != nil {
		m.errors.WithLabelValues(reason).Inc()
	}
}

// waited adds the time a request was held back by the spacing.
func (m *metrics) waited(d time.Duration) {
	if m != nil {
		m.pacing.Add(d.Seconds())
	}
}

// transportReason is the reason of an error from sending a request or
// reading its body. The guard comes first: its refusal is a dial error
// that could otherwise read as another kind.
func transportReason(err error) string {
	var (
		cv *tls.CertificateVerificationError
		rh tls.RecordHeaderError
		al tls.AlertError
		ne net.Error
	)
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		return reasonGuard
	case errors.As(err, &cv), errors.As(err, &rh), errors.As(err, &al):
		return reasonTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return reasonTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return reasonRefused
	}
	return reasonOther
}
