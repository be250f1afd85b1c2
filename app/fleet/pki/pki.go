// Package pki is the hub's own certificate authority for -tls: it creates
// (or loads) the CA in -tls-dir, issues and renews the hub's HTTPS server
// certificate (or serves the operator's -tls-cert/-tls-key), signs the
// agents' client certificates (CN netmon-agent-<id>) and tells app/fleet
// and app/hub which agent a verified TLS connection belongs to (spec 5.10).
//
// It sits under app/fleet, the hub side of agents: app/fleet calls
// SignClient at hello and certificate renewal, app/hub builds the Authority
// and hands ServerTLSConfig to the HTTP server, and the API's agent
// authentication reads AgentID from the request's TLS state. It imports
// nothing of netmon but agentmode/wire, so the CN format cannot drift from
// the agent's side.
//
// The server asks for a client certificate but accepts connections
// without one (tls.VerifyClientCertIfGiven): browsers and API clients
// share the port with agents and have no certificate, and an agent may
// still authenticate by bearer token. A certificate that IS presented must
// verify against the hub CA alone, carry the client-auth key usage and
// name an agent; otherwise the handshake fails. Identity comes only from
// the verified chain, never from headers (RELIABILITY case 20).
//
// The CA is never replaced silently: agents pinned it on first contact,
// so a damaged or mismatched ca.crt/ca.key is an error at New and the
// operator decides.
package pki

import (
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// File names inside Config.Dir.
const (
	caCertFile     = "ca.crt"
	caKeyFile      = "ca.key"
	serverCertFile = "server.crt"
	serverKeyFile  = "server.key"
)

// clockSkew back-dates NotBefore so a peer whose clock runs a little
// behind the hub's accepts a certificate issued a moment ago.
const clockSkew = 5 * time.Minute

// Authority is the hub CA with the current server certificate. It is safe
// for concurrent use.
type Authority struct {
	log *slog.Logger
	cfg Config
	now func() time.Time

	ca     *x509.Certificate
	caKey  crypto.Signer
	caPEM  string
	caPool *x509.CertPool

	// dns and ips are cfg.Hosts split for the server certificate.
	dns []string
	ips []net.IP

	mu     sync.Mutex
	server *tls.Certificate // what GetCertificate serves; Leaf is set
	// lastRenewFail throttles retries of a failed renewal, so a full disk
	// does not cost a key generation and a log line per handshake.
	lastRenewFail time.Time
	// opStamp is the state of the operator files behind server; opFailed
	// the state of files that did not load, so a half-written pair is
	// retried (and logged) once per change rather than per handshake.
	opStamp  fileStamp
	opFailed fileStamp
}

// Deps are the authority's collaborators.
type Deps struct {
	// Now is the clock for issuing and for verifying peers; nil means
	// time.Now. Tests move it to expire certificates.
	Now func() time.Time
}

// New loads the CA and the server certificate from cfg.Dir, creating what
// is missing. A damaged, mismatched or foreign pair is an error, never
// replaced. A server certificate that is due for renewal or no longer
// covers cfg.Hosts is re-issued.
func New(log *slog.Logger, cfg Config, deps Deps) (*Authority, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := normalize(cfg)
	if err != nil {
		return nil, err
	}
	a := &Authority{log: log, cfg: cfg, now: deps.Now}
	if a.now == nil {
		a.now = time.Now
	}
	a.dns, a.ips = splitHosts(cfg.Hosts)

	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create tls dir %q: %w", cfg.Dir, err)
	}
	if err := a.loadOrCreateCA(); err != nil {
		return nil, err
	}
	a.caPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.ca.Raw}))
	a.caPool = x509.NewCertPool()
	a.caPool.AddCert(a.ca)

	if cfg.CertFile != "" {
		err = a.loadOperator()
	} else {
		err = a.loadOrIssueServer()
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// normalize fills defaults and refuses contradictions.
func normalize(cfg Config) (Config, error) {
	if cfg.Dir == "" {
		return cfg, errors.New("tls dir is empty")
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return cfg, errors.New("-tls-cert and -tls-key go together: set both or neither")
	}
	var hosts []string
	for _, h := range cfg.Hosts {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		hosts = DefaultHosts()
	}
	cfg.Hosts = hosts
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.CALife, DefaultCALife}, {&cfg.ServerLife, DefaultServerLife}, {&cfg.ClientLife, DefaultClientLife}} {
		if *d.v < 0 {
			return cfg, fmt.Errorf("negative certificate life %s", *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	return cfg, nil
}

// CAPEM returns the CA certificate in PEM, as handed to agents to pin.
func (a *Authority) CAPEM() string { return a.caPEM }

// splitHosts sorts hosts into DNS names and IP addresses; "[::1]" is
// accepted as an IP.
func splitHosts(hosts []string) (dns []string, ips []net.IP) {
	for _, h := range hosts {
		if ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); ip != nil {
			ips = append(ips, ip)
			continue
		}
		dns = append(dns, h)
	}
	return dns, ips
}

// randomSerial returns a random positive 128-bit serial number: unique
// without keeping a counter, and unguessable.
func randomSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generate serial number: %w", err)
	}
	// Zero is not a valid serial; 1 in 2^128 is not worth a loop.
	return n.Add(n, big.NewInt(1)), nil
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// pemBlock returns the first PEM block of one of types in data.
func pemBlock(data []byte, types ...string) (*pem.Block, bool) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, false
		}
		for _, t := range types {
			if b.Type == t {
				return b, true
			}
		}
	}
}

// writeFiles writes each file to a temporary name first and renames them
// all at the end, so a crash leaves either the old or the new content of
// each file, never a truncated one; the window in which a pair can be
// mixed is two renames.
func writeFiles(files ...fileContent) error {
	tmps := make([]string, 0, len(files))
	defer func() {
		for _, t := range tmps {
			os.Remove(t) // no-op after a successful rename
		}
	}()
	for _, f := range files {
		tmp, err := writeTemp(f)
		if err != nil {
			return err
		}
		tmps = append(tmps, tmp)
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], f.path); err != nil {
			return fmt.Errorf("replace %s: %w", f.path, err)
		}
	}
	if d, err := os.Open(filepath.Dir(files[0].path)); err == nil {
		// Make the renames durable; not all systems can sync a directory.
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// fileContent is one file for writeFiles.
type fileContent struct {
	path string
	data []byte
	perm os.FileMode
}

func writeTemp(f fileContent) (string, error) {
	t, err := os.CreateTemp(filepath.Dir(f.path), "."+filepath.Base(f.path)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", f.path, err)
	}
	name := t.Name()
	err = t.Chmod(f.perm)
	if err == nil {
		_, err = t.Write(f.data)
	}
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("write %s: %w", f.path, err)
	}
	return name, nil
}

// exists reports whether path exists; an error other than "not found"
// (permissions, a broken disk) is returned rather than taken as absent,
// which would lead to creating a new CA over an unreadable one.
func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("check %s: %w", path, err)
}
