package geo

import (
	"time"
)

// DefaultOnlineURL is the ip-api.com batch endpoint. Its wire format: a
// POST whose body is a JSON array of IP address strings (at most 100),
// answered by a JSON array of objects {status, query, countryCode, as}
// (plus message on a failure), where status is "success" or "fail" and "as" is
// "AS15169 Google LLC". The free endpoint is plain HTTP and limited to 15
// requests a minute per client address; it answers 429 beyond that and
// announces the remaining budget in the X-Rl and X-Ttl headers.
const DefaultOnlineURL = "http://ip-api.com/batch?fields=status,query,countryCode,as"

// Config is the configuration of the GeoIP component.
type Config struct {
	// Dir is the directory of .mmdb files (-geoip-dir). A missing
	// directory means no database; it is checked again on every reload.
	Dir string
	// Online enables the online batch lookup (-ip-online-lookup). It is
	// used only while Dir holds no usable .mmdb file.
	Online bool
	// OnlineURL is the batch service, speaking the wire format described
	// at DefaultOnlineURL. Its host decides what the default HTTP client
	// may reach: see Deps.HTTPClient.
	OnlineURL string
	// BatchInterval is the time between two online requests; at most one
	// request is made per interval.
	BatchInterval time.Duration
	// BatchMax is the most addresses sent in one request.
	BatchMax int
	// QueueMax bounds the addresses waiting for an online lookup; when it
	// is full a new address is dropped (counted) and asked again the next
	// time it is seen.
	QueueMax int
	// CacheMax bounds the online answers kept (least recently used out).
	CacheMax int
	// CacheTTL is how long a positive online answer is kept.
	CacheTTL time.Duration
	// NegativeTTL is how long a failed online answer ("reserved range",
	// no data, missing from the reply) is kept; shorter than CacheTTL.
	NegativeTTL time.Duration
	// Backoff is the pause of online requests after an HTTP 429.
	Backoff time.Duration
	// ReloadInterval is how often Dir is checked for added, removed or
	// changed files (size or modification time); 0 disables reloading.
	ReloadInterval time.Duration
}

// DefaultConfig returns the configuration of spec section 8: a batch
// every 3 s of at most 100 addresses, 100 000 cached answers, 1 minute
// back-off after a 429.
func DefaultConfig() Config {
	return Config{
		Dir:            "geoip",
		Online:         true,
		OnlineURL:      DefaultOnlineURL,
		BatchInterval:  3 * time.Second,
		BatchMax:       100,
		QueueMax:       1000,
		CacheMax:       100_000,
		CacheTTL:       24 * time.Hour,
		NegativeTTL:    10 * time.Minute,
		Backoff:        time.Minute,
		ReloadInterval: 30 * time.Second,
	}
}

// withDefaults fills zero values so that a partly filled Config (as in
// tests) still runs with sane bounds.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.OnlineURL == "" {
		c.OnlineURL = d.OnlineURL
	}
	if c.BatchInterval <= 0 {
		c.BatchInterval = d.BatchInterval
	}
	if c.BatchMax <= 0 {
		c.BatchMax = d.BatchMax
	}
	if c.QueueMax <= 0 {
		c.QueueMax = d.QueueMax
	}
	if c.CacheMax <= 0 {
		c.CacheMax = d.CacheMax
	}
	if c.CacheTTL <= 0 {
		c.CacheTTL = d.CacheTTL
	}
	if c.NegativeTTL <= 0 {
		c.NegativeTTL = d.NegativeTTL
	}
	if c.Backoff <= 0 {
		c.Backoff = d.Backoff
	}
	return c
}
