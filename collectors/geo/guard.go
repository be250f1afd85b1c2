package geo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errBlockedAddress is returned (wrapped) when the guarded client
// refuses to connect to an address (RELIABILITY case 28).
var errBlockedAddress = errors.New("outbound connection to a non-global address refused")

// errForeignRedirect is returned when the online service redirects to
// another host.
var errForeignRedirect = errors.New("redirect to another host refused")

// dialGuard decides at connect time, on the resolved address, whether a
// connection may be made. allowed is the one non-global address and port
// an operator named as an IP literal in the service URL.
type dialGuard struct {
	allowed netip.AddrPort
}

// newDialGuard derives the explicit permission from the service URL: an
// IP-literal host that is not global (and not a metadata service) is
// allowed on the URL's port; a name never is, since what a name resolves
// to can change.
func newDialGuard(serviceURL string) (dialGuard, error) {
	u, err := url.Parse(serviceURL)
	if err != nil {
		return dialGuard{}, fmt.Errorf("parse online lookup URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return dialGuard{}, fmt.Errorf("online lookup URL %q: scheme must be http or https", serviceURL)
	}
	var g dialGuard
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		ip = ip.Unmap()
		port := map[string]string{"http": "80", "https": "443"}[u.Scheme]
		if u.Port() != "" {
			port = u.Port()
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return dialGuard{}, fmt.Errorf("online lookup URL %q: bad port", serviceURL)
		}
		if !isGlobal(ip) && !isMetadata(ip) {
			g.allowed = netip.AddrPortFrom(ip, uint16(p))
		}
	}
	return g, nil
}

// check reports whether a connection to ap may be made.
func (g dialGuard) check(ap netip.AddrPort) error {
	addr := ap.Addr().Unmap()
	switch {
	case isMetadata(addr):
		return fmt.Errorf("%w: %s is a cloud metadata address", errBlockedAddress, addr)
	case isGlobal(addr):
		return nil
	case g.allowed.IsValid() && addr == g.allowed.Addr() && ap.Port() == g.allowed.Port():
		return nil
	}
	return fmt.Errorf("%w: %s", errBlockedAddress, ap)
}

// control is a net.Dialer Control: it runs after name resolution and
// before connect, once for every address tried.
func (g dialGuard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", errBlockedAddress, address)
	}
	return g.check(ap)
}

// newGuardedClient builds the default outbound client of the online
// lookup for serviceURL: guarded dialer, no proxy (a proxy would be
// dialled instead of the target and defeat the check), redirects only
// to the same host and port.
func newGuardedClient(serviceURL string) (*http.Client, error) {
	guard, err := newDialGuard(serviceURL)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(serviceURL) // parsed above
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: guard.control}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		MaxIdleConns:          2,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   15 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !strings.EqualFold(req.URL.Host, u.Host) || req.URL.Scheme != u.Scheme {
				return fmt.Errorf("%w: %s", errForeignRedirect, req.URL.Host)
			}
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}, nil
}
