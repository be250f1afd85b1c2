// Package fwrest is the REST driver of the one firewall vendor of the
// spec (identifier "fwvendor"; spec 2.11): system status, CPU, memory,
// disk and sessions, interface counters, IPsec and SSL VPN, SD-WAN
// health checks and policy hit counters, read from the device's monitor
// API on its web-UI port with a bearer API token. Requests to one device
// are spaced Spacing (150 ms) apart. A self-signed certificate is
// refused unless api_verify_tls is false.
//
// The device cannot be reached here: the driver is tested against the
// fixture sets of testdata/fwrest (one per profile), served over TLS in
// the vendor's JSON shapes.
package fwrest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"netmon/store/record"
)

// Profiles are the accepted profile values; auto picks one from the
// version the device reports.
var Profiles = []string{"auto", "7.0", "7.2", "7.4", "7.6", "default"}

// Client talks to one device.
type Client struct {
	cfg   Config
	dev   record.Device
	http  *http.Client
	base  *url.URL
	mu    sync.Mutex
	last  time.Time
	sleep func(time.Duration)
	m     *metrics // the scheduled poller's; nil for a probe
	probe bool     // errors in the driver's words only (errText)
	// Requests are the times requests were sent.
	Requests []time.Time
}

// NewClient returns a client of dev (api_url, api_token, api_verify_tls,
// vdom). It does no I/O.
func NewClient(cfg Config, deps Deps, dev record.Device) (*Client, error) {
	u, err := url.Parse(dev.APIURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("api_url %q: want https://<device>[:port]", dev.APIURL)
	}
	var tr *http.Transport
	if deps.TransportFor != nil {
		tr = deps.TransportFor(dev.APIURL).Clone()
	} else if deps.Transport != nil {
		tr = deps.Transport.Clone()
	} else {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: !dev.APIVerifyTLS} //nolint:gosec // the operator's choice for a self-signed device (api_verify_tls=false)
	if cfg.Spacing <= 0 {
		cfg.Spacing = DefaultConfig().Spacing
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultConfig().MaxBody
	}
	if cfg.MaxRecords <= 0 {
		cfg.MaxRecords = DefaultConfig().MaxRecords
	}
	return &Client{cfg: cfg, dev: dev, base: u, sleep: time.Sleep,
		http: &http.Client{Transport: tr, Timeout: cfg.Timeout,
			// A redirect could carry the token elsewhere: never follow.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, nil
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// HTTPError is a response other than 200.
type HTTPError struct {
	Path string
	Code int
}

func (e *HTTPError) Error() string {
	switch e.Code {
	case http.StatusUnauthorized:
		return fmt.Sprintf("%s: 401: the API token was refused", e.Path)
	case http.StatusForbidden:
		return fmt.Sprintf("%s: 403: the API token's profile may not read this (or a trusted-host rule refused the hub)", e.Path)
	}
	return fmt.Sprintf("%s: HTTP %d", e.Path, e.Code)
}

// envelope is the monitor API's answer around its results.
type envelope struct {
	HTTPStatus int             `json:"http_status"`
	Status     string          `json:"status"`
	VDOM       string          `json:"vdom"`
	Version    string          `json:"version"`
	Build      int             `json:"build"`
	Serial     string          `json:"serial"`
	Results    json.RawMessage `json:"results"`
}

// get requests path (with the vdom query) after the spacing, and decodes
// its envelope. With vdom "all" the device answers an array of
// envelopes, one per virtual domain. endpoint names the request in the
// metrics.
func (c *Client) get(ctx context.Context, endpoint, path string, query url.Values) ([]envelope, int, error) {
	c.mu.Lock()
	if wait := c.cfg.Spacing - time.Since(c.last); !c.last.IsZero() && wait > 0 {
		c.sleep(wait)
		c.m.waited(wait)
	}
	c.Requests = append(c.Requests, time.Now())
	c.mu.Unlock()
	c.m.request(endpoint)
	// The spacing runs from the end of the previous exchange: the device
	// sees requests at least Spacing apart whatever the handshake took.
	defer func() {
		c.mu.Lock()
		c.last = time.Now()
		c.mu.Unlock()
	}()

	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	if query == nil {
		query = url.Values{}
	}
	switch c.dev.VDOM {
	case "", "root":
		if c.dev.VDOM != "" {
			query.Set("vdom", c.dev.VDOM)
		}
	case "all":
		query.Set("vdom", "*")
	default:
		query.Set("vdom", c.dev.VDOM)
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		c.m.failed(reasonOther)
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.dev.APIToken)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		reason := transportReason(err)
		c.m.failed(reason)
		return nil, 0, &TransportError{Path: path, Reason: reason, Err: describeErr(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBody+1))
	if err != nil {
		reason := transportReason(err)
		c.m.failed(reason)
		return nil, resp.StatusCode, &TransportError{Path: path, Reason: reason, Err: fmt.Errorf("%s: read: %w", path, err)}
	}
	if int64(len(body)) > c.cfg.MaxBody {
		c.m.failed(reasonTooLarge)
		return nil, resp.StatusCode, fmt.Errorf("%s: answer over %d bytes", path, c.cfg.MaxBody)
	}
	if resp.StatusCode != http.StatusOK {
		c.m.failed(reasonHTTPStatus)
		return nil, resp.StatusCode, &HTTPError{Path: path, Code: resp.StatusCode}
	}
	envs, err := decodeEnvelopes(body)
	if err != nil {
		c.m.failed(reasonDecode)
		if de, ok := err.(*DecodeError); ok {
			de.Path = path
		}
		return nil, resp.StatusCode, err
	}
	return envs, resp.StatusCode, nil
}

// TransportError is a request that got no whole answer: not sent,
// refused, cut or timed out. Reason is one of the metric's reasons.
type TransportError struct {
	Path   string
	Reason string
	Err    error
}

func (e *TransportError) Error() string { return e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }

// errText is err as the probe reports it: the driver's own words only.
// A probe may name any HTTPS service, so nothing the server chose (its
// body, its certificate's names, its TLS alert) is echoed; the outbound
// guard's refusal is ours and says which rule refused.
func errText(err error) string {
	var te *TransportError
	if !errors.As(err, &te) {
		return err.Error() // HTTPError, DecodeError, the size cap: fixed texts
	}
	var cv *tls.CertificateVerificationError
	switch {
	case te.Reason == reasonGuard:
		return err.Error()
	case errors.As(err, &cv):
		return "TLS: the device's certificate is not trusted (self-signed? set api_verify_tls=false to accept it)"
	case te.Reason == reasonTLS:
		return "TLS: the handshake failed"
	case te.Reason == reasonTimeout:
		return te.Path + ": no answer in time"
	case te.Reason == reasonRefused:
		return "connection refused"
	}
	return te.Path + ": the connection failed"
}

// describeErr names the TLS refusal of a self-signed device.
func describeErr(err error) error {
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return fmt.Errorf("TLS: the device's certificate is not trusted (self-signed? set api_verify_tls=false to accept it): %w", err)
	}
	return err
}
