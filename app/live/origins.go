package live

import (
	"net"
	"net/url"
	"strconv"
)

// Origins is the feed's origin allow-list (spec: -public-url, -tls-hosts,
// localhost, 127.0.0.1 and [::1]) as exact origins on the hub's own port;
// nil — every origin — when publicURL and tlsHosts are both empty.
// tlsHosts count only with tls (the hub serves HTTPS).
func Origins(publicURL string, tls bool, tlsHosts []string, port int) []string {
	if !tls {
		tlsHosts = nil
	}
	if publicURL == "" && len(tlsHosts) == 0 {
		return nil
	}
	p := strconv.Itoa(port)
	scheme := "http"
	if tls {
		scheme = "https"
	}
	var out []string
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		out = append(out, u.Scheme+"://"+u.Host)
	}
	for _, host := range tlsHosts {
		out = append(out, "https://"+net.JoinHostPort(host, p))
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		out = append(out, scheme+"://"+net.JoinHostPort(host, p))
	}
	return out
}
