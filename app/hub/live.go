package hub

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"netmon/app/api"
	"netmon/app/auth"
)

// TickConnections caps the sockets of a tick: a busy host has thousands
// (2 676 made a 419 KB tick, sent every second to every client).
const TickConnections = 200

// topConnections keeps the n most active sockets: established ones first,
// then those standing for more identical sockets (count), then those with
// a remote end; ties in address order, so the list does not shuffle
// between ticks.
func topConnections(cs []api.Connection, n int) []api.Connection {
	if len(cs) <= n {
		return cs
	}
	rank := func(c api.Connection) int {
		switch {
		case c.Status == "ESTABLISHED":
			return 0
		case c.RemoteAddr != "" && c.RemoteAddr != "*:*" && c.Status != "LISTEN":
			return 1
		}
		return 2
	}
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b api.Connection) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(b.Count, a.Count),
			cmp.Compare(a.RemoteAddr, b.RemoteAddr), cmp.Compare(a.LocalAddr, b.LocalAddr))
	})
	return out[:n]
}

// liveOrigins is the live feed's origin allow-list (spec: -public-url,
// -tls-hosts, localhost, 127.0.0.1 and [::1]) as exact origins on the
// hub's own port; empty — every origin — when -public-url and -tls-hosts
// are both unset.
func (h *Hub) liveOrigins() []string {
	var tlsHosts []string
	if h.cfg.Fleet.TLS {
		tlsHosts = h.cfg.Fleet.TLSHosts
	}
	if h.cfg.Access.PublicURL == "" && len(tlsHosts) == 0 {
		return nil
	}
	port := strconv.Itoa(h.ln.Addr().(*net.TCPAddr).Port)
	scheme := "http"
	if h.cfg.Fleet.TLS {
		scheme = "https"
	}
	var out []string
	if u, err := url.Parse(h.cfg.Access.PublicURL); err == nil && u.Host != "" {
		out = append(out, u.Scheme+"://"+u.Host)
	}
	for _, host := range tlsHosts {
		out = append(out, "https://"+net.JoinHostPort(host, port))
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		out = append(out, scheme+"://"+net.JoinHostPort(host, port))
	}
	return out
}

// liveSessions lets the live feed re-check its clients' credentials every
// tick through the auth service — which reads the session store (shared
// with -session-store=db) and the user's role and enabled flag live.
type liveSessions struct{ h *Hub }

// openKey marks a client that connected while authentication was off.
const openKey = "\x00open"

func (s liveSessions) Key(r *http.Request) string {
	cr, ok := auth.CredentialsOf(r)
	if !ok || cr.Token == "" {
		return openKey
	}
	return cr.Token
}

func (s liveSessions) Valid(ctx context.Context, key string) (bool, error) {
	required, err := s.h.auth.Required(ctx)
	if err != nil {
		return false, err
	}
	if key == openKey {
		// Fine while authentication stays off; once a password or the
		// first user turns it on, an anonymous socket ends.
		return !required, nil
	}
	if !required {
		return true, nil
	}
	id, err := s.h.auth.Authenticate(ctx, auth.Credentials{Token: key})
	if errors.Is(err, auth.ErrUnauthenticated) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return id.Can(auth.PermView, s.h.auth.MultiSite()), nil
}
