package ai

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"netmon/app/netguard"
)

// The egress lock (spec 1 -ai-allow-cloud, issue 32). An address is
// local when it is loopback, RFC 1918 or IPv6 ULA (fc00::/7):
// netip.Addr.IsPrivate and IsLoopback, never link-local (cloud metadata
// lives there) nor CGNAT. A provider is local when every address its
// base URL resolves to is. The decision is taken again at every
// connection, on the addresses the host resolves to then, redirects
// included (each hop dials again):
//
//   - a provider found local at registration may connect to local
//     addresses: naming it was the admin's permission, as for a device;
//   - any other address, and every address of a cloud provider, goes
//     through the hub's outbound guard, and only when AllowCloud: with
//     -ai-allow-cloud=false nothing but a local address is ever dialled.
//
// Cloud metadata addresses are refused in every case.

// ErrEgress is wrapped by every refusal of the lock.
var ErrEgress = errors.New("AI egress lock")

// isLocalAddr reports whether a is loopback, RFC 1918 or ULA.
func isLocalAddr(a netip.Addr) bool {
	a = a.Unmap()
	return (a.IsLoopback() || a.IsPrivate()) && !netguard.IsMetadata(a)
}

func (s *Service) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	var (
		addrs []netip.Addr
		err   error
	)
	if s.deps.LookupIP != nil {
		addrs, err = s.deps.LookupIP(ctx, host)
	} else {
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", host)
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, nil
}

// classify resolves baseURL's host and says whether the provider is
// local; with AllowCloud off, a provider that is not is refused
// (registration's half of the lock).
func (s *Service) classify(ctx context.Context, baseURL string) (local bool, err error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Hostname() == "" {
		return false, fmt.Errorf("base_url: not an absolute http(s) URL")
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := s.lookup(lctx, u.Hostname())
	if err != nil {
		return false, fmt.Errorf("base_url: %s does not resolve", u.Hostname())
	}
	local = true
	var far netip.Addr
	for _, a := range addrs {
		if netguard.IsMetadata(a) {
			return false, fmt.Errorf("%w: base_url %s resolves to %s, a cloud metadata address", ErrEgress, u.Hostname(), a)
		}
		if !isLocalAddr(a) {
			local, far = false, a
		}
	}
	if !local && !s.cfg.AllowCloud {
		return false, fmt.Errorf("%w: base_url %s resolves to %s (%s); with -ai-allow-cloud=false only loopback, RFC 1918 and ULA addresses are accepted",
			ErrEgress, u.Hostname(), far, netguard.Class(far))
	}
	return local, nil
}

// allowed is the connection-time decision for one address.
func (s *Service) allowed(a netip.Addr, port uint16, registeredLocal bool) error {
	a = a.Unmap()
	switch {
	case netguard.IsMetadata(a):
		return fmt.Errorf("%w: %s is a cloud metadata address", ErrEgress, a)
	case registeredLocal && isLocalAddr(a):
		return nil
	case !s.cfg.AllowCloud:
		return fmt.Errorf("%w: %s (%s) is not local and -ai-allow-cloud=false", ErrEgress, a, netguard.Class(a))
	}
	if err := s.deps.Guard.Check(netip.AddrPortFrom(a, port)); err != nil {
		return fmt.Errorf("%w: %w", ErrEgress, err)
	}
	return nil
}

// httpClient is the HTTP client of one provider: its own resolution and
// the lock's check at every dial (the socket's Control checks the
// address once more, so nothing but a checked address is connected),
// no proxy, no redirect to another host (a kind's key header, such as
// x-api-key, would follow it), and no response-header timeout: the
// provider package bounds the first byte itself (a local engine may
// load its model first).
func (s *Service) httpClient(registeredLocal bool) *http.Client {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, portText, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		port, err := net.LookupPort(network, portText)
		if err != nil {
			return nil, err
		}
		addrs, err := s.lookup(ctx, host)
		if err != nil {
			return nil, err
		}
		var firstErr error
		for _, a := range addrs {
			if err := s.allowed(a, uint16(port), registeredLocal); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			d := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
				ap, err := netip.ParseAddrPort(address)
				if err != nil {
					return fmt.Errorf("%w: %q", ErrEgress, address)
				}
				return s.allowed(ap.Addr(), ap.Port(), registeredLocal)
			}}
			conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
			if err == nil {
				return conn, nil
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		return nil, firstErr
	}
	return &http.Client{
		Transport: &http.Transport{Proxy: nil, DialContext: dial, TLSHandshakeTimeout: 10 * time.Second,
			ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > 3 {
				return errors.New("too many redirects")
			}
			if first := via[0].URL; !strings.EqualFold(req.URL.Host, first.Host) || req.URL.Scheme != first.Scheme {
				return fmt.Errorf("%w: %s", netguard.ErrForeignRedirect, req.URL.Host)
			}
			return nil
		},
	}
}
