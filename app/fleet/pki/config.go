package pki

import (
	"os"
	"time"
)

// Lifetimes of the spec (section 8).
const (
	// DefaultCALife is the hub CA's life: 10 years, so agents that pinned
	// it on first contact keep working for the life of an installation.
	DefaultCALife = 10 * 365 * 24 * time.Hour
	// DefaultServerLife is "about 13 months": 395 days stays under the
	// 398-day ceiling browsers enforce on server certificates.
	DefaultServerLife = 395 * 24 * time.Hour
	// DefaultClientLife is the agents' client-certificate life; agents
	// renew at half of it.
	DefaultClientLife = 90 * 24 * time.Hour
)

// Config configures the hub's certificate authority (flags -tls-dir,
// -tls-hosts, -tls-cert, -tls-key; -tls itself decides whether app/hub
// builds an Authority at all).
type Config struct {
	// Enabled (-tls) serves HTTPS and agent mTLS: app/hub builds an
	// Authority only when it is set.
	Enabled bool
	// Dir (-tls-dir) holds ca.crt, ca.key, server.crt and server.key. It is
	// created with mode 0700 when missing; keys are written 0600.
	Dir string
	// Hosts (-tls-hosts) are the DNS names and IP addresses put in the
	// generated server certificate. Empty means DefaultHosts(). A change
	// re-issues the server certificate at the next start.
	Hosts []string
	// CertFile (-tls-cert) names an operator's server certificate (PEM,
	// leaf first), served instead of the generated one. It is re-read when
	// it or KeyFile changes (mtime or size), so a renewed certificate is
	// served without a restart. The CA is still created and signs the
	// agents' client certificates.
	CertFile string
	// KeyFile (-tls-key) is CertFile's private key; set both or neither.
	KeyFile string
	// CALife is the life of a newly created CA.
	CALife time.Duration
	// ServerLife is the life of a generated server certificate.
	ServerLife time.Duration
	// ClientLife is the life of an agent client certificate; it is cut to
	// the CA's own expiry.
	ClientLife time.Duration
}

// DefaultConfig returns the spec's defaults: TLS off, files in ./tls, the
// generated certificate for DefaultHosts() (Hosts stays empty so that a
// configuration shows which hosts the operator named).
func DefaultConfig() Config {
	return Config{
		Dir:        "tls",
		CALife:     DefaultCALife,
		ServerLife: DefaultServerLife,
		ClientLife: DefaultClientLife,
	}
}

// DefaultHosts returns localhost, 127.0.0.1, ::1 and, when known, the
// machine's host name: enough for a browser on the hub and agents on the
// local network that address the hub by its name.
func DefaultHosts() []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if name, err := os.Hostname(); err == nil && name != "" && name != "localhost" {
		hosts = append(hosts, name)
	}
	return hosts
}
