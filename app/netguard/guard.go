// Package netguard is the one outbound dialer of the hub (RELIABILITY
// case 28): every connection the hub opens to an address an operator or
// a remote party configured — webhooks, chat, messenger, SMTP, SIEM,
// tickets, OIDC discovery, the online GeoIP service — goes through a
// Guard. It is a leaf (stdlib only) so collectors and alerting can both
// use it.
//
// The decision is taken at connect time, in the net.Dialer's Control
// function, on the address actually dialled after DNS resolution: a name
// that resolves to a private address, a resolver that answers a public
// address to a pre-check and a private one to the connect (DNS
// rebinding), and a redirect to a metadata service all meet the same
// check, since every redirect hop dials again.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// ErrBlocked is returned (wrapped) when the guard refuses an address.
var ErrBlocked = errors.New("outbound connection to a non-global address refused")

// Guard decides whether an outbound connection may be made. The zero
// value refuses every non-global address; it is safe for concurrent use
// and never changes after construction.
type Guard struct {
	allow []netip.Prefix
	exact netip.AddrPort // one address:port the configured URL names as an IP literal
}

// New returns a guard for cfg.
func New(cfg Config) *Guard {
	return &Guard{allow: append([]netip.Prefix(nil), cfg.Allow...)}
}

// ForURL returns a copy of g that also allows the one non-global
// address and port serviceURL names as an IP literal (an operator
// pointing at an internal service on purpose). A host name never grants
// it, not even "localhost", since what a name resolves to can change;
// metadata addresses are never granted.
func (g *Guard) ForURL(serviceURL string) (*Guard, error) {
	u, err := url.Parse(serviceURL)
	if err != nil {
		return nil, fmt.Errorf("parse outbound URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("outbound URL %q: scheme must be http or https", serviceURL)
	}
	out := *g
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
		ip = ip.Unmap()
		port := map[string]string{"http": "80", "https": "443"}[u.Scheme]
		if u.Port() != "" {
			port = u.Port()
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("outbound URL %q: bad port", serviceURL)
		}
		if !IsGlobal(ip) && !IsMetadata(ip) {
			out.exact = netip.AddrPortFrom(ip, uint16(p))
		}
	}
	return &out, nil
}

// Check reports whether a connection to ap may be made.
func (g *Guard) Check(ap netip.AddrPort) error {
	addr := ap.Addr().Unmap()
	switch {
	case IsMetadata(addr):
		return fmt.Errorf("%w: %s is a cloud metadata address", ErrBlocked, addr)
	case IsGlobal(addr):
		return nil
	case g.exact.IsValid() && addr == g.exact.Addr() && ap.Port() == g.exact.Port():
		return nil
	}
	for _, p := range g.allow {
		if p.Contains(addr) || p.Contains(embedded(addr)) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s (%s)", ErrBlocked, ap, Class(addr))
}

// Control is a net.Dialer Control function: it runs after name
// resolution and before connect, once for every address tried.
func (g *Guard) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrBlocked, address)
	}
	return g.Check(ap)
}

// ConfiguredControl is the socket hook for connections to addresses an
// operator configured one by one, such as a polled device: naming the
// device is the permission, so any address is allowed but a cloud
// metadata one (a device name that resolves there is refused).
func (g *Guard) ConfiguredControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrBlocked, address)
	}
	if addr := ap.Addr().Unmap(); IsMetadata(addr) {
		return fmt.Errorf("%w: %s is a cloud metadata address", ErrBlocked, addr)
	}
	return nil
}

// Dialer returns a net.Dialer whose every connection is checked.
// resolver may be nil (the system's).
func (g *Guard) Dialer(timeout time.Duration, resolver *net.Resolver) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: g.Control, Resolver: resolver}
}

// DialContext dials through the guard with a 10 s timeout.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return g.Dialer(10*time.Second, nil).DialContext(ctx, network, addr)
}

// Class names the refused class of a non-global address, for errors
// and the delivery log.
func Class(addr netip.Addr) string {
	addr = embedded(addr)
	switch {
	case IsMetadata(addr):
		return "metadata"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsLoopback():
		return "loopback"
	case addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast():
		return "link-local"
	case addr.IsPrivate():
		return "private"
	case addr.IsMulticast() || addr.IsInterfaceLocalMulticast():
		return "multicast"
	case !IsGlobal(addr):
		return "reserved"
	}
	return "global"
}
