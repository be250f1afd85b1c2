package geo

import (
	"net/http"
	"net/netip"

	"netmon/app/netguard"
)

// isGlobal is netguard's: the addresses looked up, queued or dialled.
func isGlobal(addr netip.Addr) bool { return netguard.IsGlobal(addr) }

// newGuardedClient builds the default outbound client of the online
// lookup for serviceURL over the hub's guard (netguard.New(Default) when
// nil): every hop dialled through the guard, no proxy, redirects only to
// the same host and port, and the one non-global address the URL names
// as an IP literal allowed.
func newGuardedClient(guard *netguard.Guard, serviceURL string) (*http.Client, error) {
	if guard == nil {
		guard = netguard.New(netguard.DefaultConfig())
	}
	g, err := guard.ForURL(serviceURL)
	if err != nil {
		return nil, err
	}
	return g.HTTPClient(netguard.ClientOptions{SameHost: true, MaxRedirects: 3}), nil
}
