package fwrest

import (
	"net/http"
	"time"
)

// Config configures the driver.
type Config struct {
	// Spacing is the least time between two requests to one device
	// (spec 8: 150 ms).
	Spacing time.Duration
	// Timeout bounds one request.
	Timeout time.Duration
	// MaxBody caps a response body read (a device answering endlessly is
	// cut, not buffered).
	MaxBody int64
	// MaxRecords bounds the entries one endpoint's answer may hold
	// (interfaces, tunnels, users, health-check members, policies): a
	// larger answer fails that endpoint (too many entries) instead of
	// filling memory and the database.
	MaxRecords int
	// MaxBackoff caps the wait before a failing device is polled again
	// (doubling from its interval); the device component applies it.
	MaxBackoff time.Duration
}

// DefaultConfig returns the defaults: 150 ms spacing, 10 s a request
// (connection, headers and the whole body: a slow or endless answer is
// cut there), 8 MiB a body, 50 000 entries an endpoint, 30 minutes'
// backoff at most.
func DefaultConfig() Config {
	return Config{Spacing: 150 * time.Millisecond, Timeout: 10 * time.Second, MaxBody: 8 << 20, MaxRecords: 50000, MaxBackoff: 30 * time.Minute}
}

// Deps are the driver's collaborators.
type Deps struct {
	// Transport makes the driver's HTTP connections. The hub hands in
	// the guarded dialer's transport (devices' configured addresses are
	// allowed by being configured); nil uses a plain one. Its TLS
	// configuration is replaced per device: verification follows
	// api_verify_tls.
	Transport *http.Transport
	// TransportFor, when set, makes the transport of one device from its
	// api_url instead (the scheduled poller's: the guard allows each
	// device's own configured address); Transport is then unused.
	TransportFor func(apiURL string) *http.Transport
}
