package geo

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// maxAnswerBytes bounds the body read from the online service: 100
// answers take about 10 KiB.
const maxAnswerBytes = 1 << 20

// maxOrgLen bounds an organisation name taken from the online service.
const maxOrgLen = 200

// online resolves public addresses through a batch HTTP service. One
// mutex guards the cache and the queue; no I/O is done under it.
type online struct {
	log    *slog.Logger
	cfg    Config
	m      *metrics
	client *http.Client
	now    func() time.Time
	idle   func() bool // true while databases answer instead

	mu      sync.Mutex
	cache   map[netip.Addr]*list.Element // of *cacheEntry
	lru     *list.List                   // front = most recently used
	queue   []netip.Addr                 // waiting, oldest first; len <= QueueMax
	pending map[netip.Addr]struct{}      // queued or in flight: the dedup set
	backoff time.Time                    // no request before this
	lastErr string                       // last logged failure, to log changes only

	// rounds counts finished flushes, so a test can wait for the batcher
	// to have looked at its queue N more times instead of sleeping.
	rounds atomic.Uint64
}

type cacheEntry struct {
	addr    netip.Addr
	info    Info
	found   bool
	expires time.Time
}

func newOnline(log *slog.Logger, cfg Config, m *metrics, client *http.Client, idle func() bool) *online {
	return &online{
		log:     log,
		cfg:     cfg,
		m:       m,
		client:  client,
		now:     time.Now,
		idle:    idle,
		cache:   make(map[netip.Addr]*list.Element),
		lru:     list.New(),
		pending: make(map[netip.Addr]struct{}),
	}
}

// lookup answers from the cache, or queues addr (a global address) for
// the next batch. The queue is bounded: when full, addr is dropped and
// counted, and queued again the next time it is looked up.
func (o *online) lookup(addr netip.Addr) (Info, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if el, ok := o.cache[addr]; ok {
		e := el.Value.(*cacheEntry)
		if o.now().Before(e.expires) {
			o.lru.MoveToFront(el)
			if e.found {
				o.m.lookupFound.Inc()
				return e.info, true
			}
			o.m.lookupNotFound.Inc()
			return Info{}, false
		}
		o.lru.Remove(el)
		delete(o.cache, addr)
		o.m.cacheEntries.Set(float64(o.lru.Len()))
	}
	if _, ok := o.pending[addr]; ok {
		o.m.lookupPending.Inc()
		return Info{}, false
	}
	if len(o.queue) >= o.cfg.QueueMax {
		o.m.lookupDropped.Inc()
		o.m.queueDropped.Inc()
		return Info{}, false
	}
	o.queue = append(o.queue, addr)
	o.pending[addr] = struct{}{}
	o.m.queueLength.Set(float64(len(o.queue)))
	o.m.lookupPending.Inc()
	return Info{}, false
}

// run sends at most one batch per BatchInterval until ctx ends. The
// timer is re-armed after each flush, so a slow request never lets two
// requests start less than an interval apart.
func (o *online) run(ctx context.Context) {
	t := time.NewTimer(o.cfg.BatchInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			o.flush(ctx)
			o.rounds.Add(1)
			t.Reset(o.cfg.BatchInterval)
		}
	}
}

// flush sends the oldest BatchMax queued addresses in one request and
// files the answers. Once a database is loaded the queue is dropped: the
// online service is used only while there is none.
func (o *online) flush(ctx context.Context) {
	idle := o.idle() // before o.mu: the lock order is never o.mu then Geo.mu
	o.mu.Lock()
	if idle {
		clear(o.pending)
		o.queue = o.queue[:0]
		o.m.queueLength.Set(0)
	}
	if len(o.queue) == 0 || o.now().Before(o.backoff) {
		o.mu.Unlock()
		return
	}
	n := min(len(o.queue), o.cfg.BatchMax)
	batch := slices.Clone(o.queue[:n])
	o.queue = slices.Delete(o.queue, 0, n)
	o.m.queueLength.Set(float64(len(o.queue)))
	o.mu.Unlock()

	answers, resp, err := o.post(ctx, batch)

	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err != nil && ctx.Err() != nil: // stopping: not a failure
		o.release(batch)
	case err != nil:
		o.m.batches.WithLabelValues("error").Inc()
		o.failed(redact(err))
		o.release(batch)
	case resp.StatusCode == http.StatusTooManyRequests:
		o.m.batches.WithLabelValues("rate_limited").Inc()
		o.backoff = o.now().Add(o.cfg.Backoff)
		o.failed("rate limited (429)")
		o.requeue(batch)
	case resp.StatusCode != http.StatusOK:
		o.m.batches.WithLabelValues("error").Inc()
		o.failed("HTTP " + strconv.Itoa(resp.StatusCode))
		o.release(batch)
	default:
		o.m.batches.WithLabelValues("ok").Inc()
		if o.lastErr != "" {
			o.log.Info("online ip lookup recovered")
			o.lastErr = ""
		}
		o.file(batch, answers)
		// ip-api.com announces an exhausted budget before it answers 429.
		if resp.Header.Get("X-Rl") == "0" {
			if ttl, err := strconv.Atoi(resp.Header.Get("X-Ttl")); err == nil && ttl > 0 {
				o.backoff = o.now().Add(min(time.Duration(ttl)*time.Second, o.cfg.Backoff))
			}
		}
	}
}

// failed logs a failure when it differs from the previous one, so a
// service that stays down logs once, not every interval.
func (o *online) failed(msg string) {
	if msg != o.lastErr {
		o.log.Warn("online ip lookup failed", "error", msg)
		o.lastErr = msg
	}
}

// redact drops the URL from a client error: a paid service carries its
// key in the query string, and a key never goes to the log.
func redact(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// release forgets addresses whose request failed: not cached, they are
// queued again when next looked up.
func (o *online) release(batch []netip.Addr) {
	for _, a := range batch {
		delete(o.pending, a)
	}
}

// requeue puts a rate-limited batch back at the head of the queue; what
// no longer fits is dropped and counted.
func (o *online) requeue(batch []netip.Addr) {
	o.queue = append(batch, o.queue...)
	if extra := len(o.queue) - o.cfg.QueueMax; extra > 0 {
		for _, a := range o.queue[o.cfg.QueueMax:] {
			delete(o.pending, a)
		}
		o.queue = o.queue[:o.cfg.QueueMax]
		o.m.queueDropped.Add(float64(extra))
	}
	o.m.queueLength.Set(float64(len(o.queue)))
}

// file caches the answers of a batch; an address the service failed on
// or left out gets a negative entry with the shorter NegativeTTL.
func (o *online) file(batch []netip.Addr, answers []answer) {
	now := o.now()
	got := make(map[netip.Addr]Info, len(answers))
	for _, a := range answers {
		addr, err := netip.ParseAddr(a.Query)
		if err != nil || a.Status != "success" {
			continue
		}
		if info := a.info(); info.Country != "" || info.ASN != "" {
			got[addr.Unmap()] = info
		}
	}
	for _, addr := range batch {
		delete(o.pending, addr)
		info, found := got[addr]
		ttl := o.cfg.CacheTTL
		if !found {
			ttl = o.cfg.NegativeTTL
		}
		o.store(&cacheEntry{addr: addr, info: info, found: found, expires: now.Add(ttl)})
	}
	o.m.cacheEntries.Set(float64(o.lru.Len()))
}

func (o *online) store(e *cacheEntry) {
	if el, ok := o.cache[e.addr]; ok {
		el.Value = e
		o.lru.MoveToFront(el)
		return
	}
	o.cache[e.addr] = o.lru.PushFront(e)
	for o.lru.Len() > o.cfg.CacheMax {
		old := o.lru.Remove(o.lru.Back()).(*cacheEntry)
		delete(o.cache, old.addr)
	}
}

// answer is one element of the service's reply.
type answer struct {
	Status      string `json:"status"` // "success" or "fail"
	Message     string `json:"message"`
	Query       string `json:"query"`
	CountryCode string `json:"countryCode"`
	AS          string `json:"as"`  // "AS15169 Google LLC"
	Org         string `json:"org"` // used when "as" has no name
}

// info validates what the service said: a country that is not two
// letters or an AS that is not "AS<digits>" is ignored, the organisation
// is made valid UTF-8 without control characters and bounded.
func (a answer) info() Info {
	var info Info
	if validCountry(a.CountryCode) {
		info.Country = strings.ToUpper(a.CountryCode)
	}
	asn, org, _ := strings.Cut(strings.TrimSpace(a.AS), " ")
	if num, ok := strings.CutPrefix(asn, "AS"); ok && num != "" && len(num) <= 10 {
		if _, err := strconv.ParseUint(num, 10, 32); err == nil {
			info.ASN = asn
			if org == "" {
				org = a.Org
			}
			info.Org = cleanOrg(org)
		}
	}
	return info
}

func cleanOrg(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	s = strings.TrimSpace(s)
	for len(s) > maxOrgLen {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// post sends one batch: a JSON array of address strings.
func (o *online) post(ctx context.Context, batch []netip.Addr) ([]answer, *http.Response, error) {
	ips := make([]string, len(batch))
	for i, a := range batch {
		ips[i] = a.String()
	}
	body, err := json.Marshal(ips)
	if err != nil {
		return nil, nil, fmt.Errorf("encode online lookup batch: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.cfg.OnlineURL, bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("build online lookup request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "netmon-geo")
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("online lookup request: %w", err)
	}
	defer resp.Body.Close()
	limited := io.LimitReader(resp.Body, maxAnswerBytes)
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, limited)
		return nil, resp, nil
	}
	var answers []answer
	if err := json.NewDecoder(limited).Decode(&answers); err != nil {
		return nil, nil, fmt.Errorf("decode online lookup answer: %w", err)
	}
	return answers, resp, nil
}
