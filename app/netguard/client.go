package netguard

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// ErrForeignRedirect is returned when a client built with SameHost
// follows a redirect to another host.
var ErrForeignRedirect = errors.New("redirect to another host refused")

// ClientOptions shape an HTTP client built over a guard.
type ClientOptions struct {
	// Timeout bounds a whole request (15 s when 0).
	Timeout time.Duration
	// SameHost refuses redirects to another scheme, host or port; every
	// hop is dialled through the guard either way.
	SameHost bool
	// MaxRedirects caps the hops followed (3 when 0).
	MaxRedirects int
	// InsecureSkipVerify skips TLS verification (a SIEM's "insecure").
	InsecureSkipVerify bool
	// Resolver replaces the system resolver (tests of rebinding).
	Resolver *net.Resolver
	// MaxIdlePerHost is how many kept-alive connections per host are
	// reused (2 when 0): a sender running n requests at once wants n.
	MaxIdlePerHost int
}

// Transport returns an HTTP transport whose every connection is dialled
// through g, with no proxy (a proxy would be dialled instead of the
// target and defeat the check). Callers that build their own client
// (a driver that never follows redirects) start from it.
func (g *Guard) Transport(o ClientOptions) *http.Transport {
	dialer := g.Dialer(5*time.Second, o.Resolver)
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		MaxIdleConns:          max(4, 4*o.MaxIdlePerHost),
		MaxIdleConnsPerHost:   max(2, o.MaxIdlePerHost),
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	if o.InsecureSkipVerify {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the operator's explicit "insecure"
	}
	return transport
}

// HTTPClient returns a client whose every connection, redirects
// included, is dialled through g, with no proxy: a proxy would be
// dialled instead of the target and defeat the check.
func (g *Guard) HTTPClient(o ClientOptions) *http.Client {
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Second
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = 3
	}
	transport := g.Transport(o)
	return &http.Client{
		Transport: transport,
		Timeout:   o.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > o.MaxRedirects {
				return errors.New("too many redirects")
			}
			first := via[0].URL
			if o.SameHost && (!strings.EqualFold(req.URL.Host, first.Host) || req.URL.Scheme != first.Scheme) {
				return fmt.Errorf("%w: %s", ErrForeignRedirect, req.URL.Host)
			}
			return nil
		},
	}
}
