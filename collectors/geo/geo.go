// Package geo answers "which country and network is this address in"
// for the capture engine (capture.Enricher) and the hub's geo map
// (GET /api/v1/geo). It is a lookup service, not a producer: it writes
// no records and imports only leaves (the outbound guard, the panic
// guard).
//
// Answers come from the .mmdb files of Config.Dir (MaxMind GeoLite2 or
// GeoIP2 Country/City/ASN, or the free ip-location-db databases that
// the mmdbconv program builds), reloaded when they change. Only while
// that directory holds no usable file, and when Config.Online is set,
// unknown public addresses are resolved in the background by an online
// batch service (ip-api.com by default) under the limits of spec
// section 8. Lookups never block on I/O: an address not known yet
// answers ok=false and is known a few seconds later. Private, loopback,
// link-local and other non-global addresses are never answered and never
// sent anywhere.
package geo

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/netguard"
	"netmon/app/panics"
)

// Sources reported by Geo.Source.
const (
	SourceMMDB   = "mmdb"
	SourceOnline = "online"
	SourceNone   = "none"
)

// Info is what is known of an address.
type Info struct {
	Country string // ISO 3166-1 alpha-2, e.g. "US"
	ASN     string // e.g. "AS15169"
	Org     string // the AS organisation, e.g. "Google LLC"
}

// Geo is the GeoIP component. Its methods are safe for concurrent use.
type Geo struct {
	// guard keeps the reload watch and the online lookup loop up: a
	// panic (the online service's answer, a hostile database file) is
	// counted in netmon_panics_total{component="geo"} and the loop runs
	// again.
	guard *panics.Guard
	log   *slog.Logger
	cfg   Config
	m     *metrics

	mu  sync.RWMutex // guards dbs; lookups hold it for reading while decoding
	dbs []*database  // sorted by file name

	reloadMu sync.Mutex             // serialises reload
	tried    map[string]fs.FileInfo // file versions already tried, by name

	online    *online // nil unless cfg.Online
	onlineErr error   // a bad OnlineURL, reported by Start

	lifeMu  sync.Mutex
	started bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Deps are the lookup's collaborators.
type Deps struct {
	// Registerer takes the metrics (nil: none).
	Registerer prometheus.Registerer
	// HTTPClient is the outbound client of the online lookup. Nil means
	// a guarded client: it refuses at connect time (after DNS resolution,
	// so rebinding does not help) loopback, private, link-local,
	// CGNAT, multicast and other non-global addresses, follows no
	// redirect to another host and uses no proxy. The one exception is
	// an OnlineURL whose host is such an address written as an IP
	// literal (an operator pointing at an internal service on purpose):
	// that exact address and port are allowed. A host name never grants it, not
	// even "localhost", and cloud metadata addresses (169.254.169.254,
	// fd00:ec2::254, 100.100.100.200) are refused always. A non-nil
	// client is used as given.
	HTTPClient *http.Client
	// Guard is the hub's outbound guard (app/netguard) the default client
	// dials through, so the operator's -outbound-allow applies; nil means
	// a guard with no allow-list.
	Guard *netguard.Guard
}

// New returns a Geo for cfg. It does no I/O; metrics are registered on
// deps.Registerer when it is not nil.
func New(log *slog.Logger, cfg Config, deps Deps) *Geo {
	reg := deps.Registerer
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	g := &Geo{
		log:   log, // the caller names the component
		cfg:   cfg,
		m:     newMetrics(reg),
		tried: make(map[string]fs.FileInfo),
	}
	if cfg.Online {
		client := deps.HTTPClient
		if client == nil {
			client, g.onlineErr = newGuardedClient(deps.Guard, cfg.OnlineURL)
		}
		g.online = newOnline(g.log, cfg, g.m, client, g.hasDatabases)
	}
	g.guard = panics.New(reg, log, "geo")
	return g
}

// Start opens the databases of Dir (a missing directory means none, and
// a file that cannot be opened is logged and skipped), then starts the
// reload watcher and, with Online, the batcher.
func (g *Geo) Start() error {
	g.lifeMu.Lock()
	defer g.lifeMu.Unlock()
	if g.started {
		return errors.New("geo already started")
	}
	if g.onlineErr != nil {
		return g.onlineErr
	}
	if err := g.reload(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	g.started = true
	if g.cfg.ReloadInterval > 0 {
		g.wg.Go(func() { g.guard.Keep(ctx.Done(), func() { g.watch(ctx) }) })
	}
	if g.online != nil {
		g.wg.Go(func() { g.guard.Keep(ctx.Done(), func() { g.online.run(ctx) }) })
	}
	g.log.Info("geoip started", "source", g.Source(), "dir", g.cfg.Dir)
	if g.Source() == SourceOnline {
		g.log.Warn("GeoIP is online: public addresses your network talks to are sent to a third-party service, in plain HTTP by default; put .mmdb files in the GeoIP directory (make geoip) or set -ip-online-lookup=false",
			"service", g.cfg.OnlineURL, "dir", g.cfg.Dir)
	}
	return nil
}

// Stop ends the watcher and the batcher (an online request in flight is
// cancelled) and closes the databases.
func (g *Geo) Stop() error {
	g.lifeMu.Lock()
	defer g.lifeMu.Unlock()
	if !g.started {
		return nil
	}
	g.started = false
	g.cancel()
	g.wg.Wait()
	g.reloadMu.Lock()
	g.tried = make(map[string]fs.FileInfo) // a restart opens every file again
	g.reloadMu.Unlock()
	g.mu.Lock()
	dbs := g.dbs
	g.dbs = nil
	g.mu.Unlock()
	for _, d := range dbs {
		d.close()
	}
	g.m.databases.Set(0)
	return nil
}

func (g *Geo) hasDatabases() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.dbs) > 0
}

func (g *Geo) watch(ctx context.Context) {
	t := time.NewTicker(g.cfg.ReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := g.reload(); err != nil {
				g.log.Warn("geoip reload failed", "error", err)
			}
		}
	}
}

// Source names where answers come from: "mmdb" while at least one
// database is loaded, else "online" when the online lookup is on, else
// "none" (GET /api/v1/geo then answers an empty array).
func (g *Geo) Source() string {
	switch {
	case g.hasDatabases():
		return SourceMMDB
	case g.online != nil:
		return SourceOnline
	}
	return SourceNone
}

// Lookup gives the country and ASN of addr; it implements
// capture.Enricher. It never blocks on I/O: in online mode an unknown
// public address answers ok=false and is queued for the next batch.
// Non-global addresses (private, loopback, link-local, ULA, multicast,
// unspecified, documentation...) answer ok=false and are never queued.
func (g *Geo) Lookup(addr netip.Addr) (country, asn string, ok bool) {
	info, ok := g.Info(addr)
	return info.Country, info.ASN, ok
}

// Info is Lookup with the AS organisation.
func (g *Geo) Info(addr netip.Addr) (Info, bool) {
	addr = addr.Unmap()
	if !isGlobal(addr) {
		g.m.lookupPrivate.Inc()
		return Info{}, false
	}
	g.mu.RLock()
	if len(g.dbs) > 0 {
		info, err := lookupDatabases(g.dbs, addr)
		g.mu.RUnlock()
		if err != nil {
			g.m.lookupError.Inc()
		}
		if info.Country == "" && info.ASN == "" {
			g.m.lookupNotFound.Inc()
			return Info{}, false
		}
		g.m.lookupFound.Inc()
		return info, true
	}
	g.mu.RUnlock()
	if g.online != nil {
		return g.online.lookup(addr)
	}
	g.m.lookupNoSource.Inc()
	return Info{}, false
}

// DatabaseInfo names a loaded database (GET /api/v1/geo/status).
type DatabaseInfo struct {
	// Name is the file's base name in the GeoIP directory.
	Name string `json:"name"`
	// Kind is what it answers: country, asn or country+asn.
	Kind string `json:"kind"`
}

// Databases lists the loaded databases in lookup order (empty when none).
func (g *Geo) Databases() []DatabaseInfo {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]DatabaseInfo, 0, len(g.dbs))
	for _, d := range g.dbs {
		out = append(out, DatabaseInfo{Name: d.name, Kind: d.kind.String()})
	}
	return out
}
