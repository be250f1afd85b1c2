// Package flows is the hub's flow collector: one UDP listener on
// -flow-port that tells NetFlow v5, v9, IPFIX and sFlow v5 apart by their
// first bytes (v5: 0x0005, v9: 0x0009, IPFIX: 0x000a, sFlow v5: the 32-bit
// version 5), and an optional second listener for sFlow alone
// (-sflow-port). Datagrams are read into pooled buffers and decoded off
// the read loop by worker goroutines, which hand flows in batches to the
// ingest record.Sink.
//
// The decoders are in the subpackages netflow and sflow; this package
// only receives, dispatches, counts and persists v9/IPFIX templates.
package flows

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
	"netmon/collectors/flows/netflow"
	"netmon/collectors/flows/sflow"
	"netmon/collectors/udpsock"
	"netmon/store/record"
)

// TemplateStore persists v9/IPFIX templates across restarts, as rows
// in rows of this package's format (*store.DB).
type TemplateStore interface {
	SaveFlowTemplates(ctx context.Context, ts []record.FlowTemplate) error
	FlowTemplates(ctx context.Context) ([]record.FlowTemplate, error)
}

type datagram struct {
	buf   *[]byte
	n     int
	from  netip.Addr
	sflow bool // from the sFlow-only port
	at    time.Time
}

// Collector receives and decodes flow exports.
type Collector struct {
	// dropped counts the records the full sink refused (Dropped).
	dropped atomic.Uint64
	// guard recovers a panic of a reader, a worker or the template saver
	// (netmon_panics_total{component="flows"}) and runs it again.
	guard     *panics.Guard
	log       *slog.Logger
	cfg       Config
	sink      record.Sink
	templates TemplateStore
	dec       *netflow.Decoder
	m         *metrics

	conns  []*net.UDPConn
	inodes inodeList // of conns, for the kernel-drop metric
	// work has one queue per worker; an exporter always goes to the same
	// one, so its datagrams are decoded in arrival order (a v9/IPFIX data
	// set must not overtake the template before it). A worker is handed
	// all its datagrams of one recvmmsg call at once: a channel send and
	// wake-up per datagram cost the scheduler more than decoding did.
	work    []chan *[]datagram
	backlog []atomic.Int64 // datagrams handed to each worker, not yet decoded
	pool    sync.Pool      // datagram buffers
	groups  sync.Pool      // *[]datagram
	readers sync.WaitGroup
	workers sync.WaitGroup
	stop    chan struct{}
	saver   sync.WaitGroup
	saved   uint64
}

// New returns a collector; Start opens the sockets.
func New(log *slog.Logger, cfg Config, sink record.Sink, templates TemplateStore, reg prometheus.Registerer) *Collector {
	d := DefaultConfig()
	if cfg.Workers <= 0 {
		cfg.Workers = d.Workers
	}
	if cfg.Backlog <= 0 {
		cfg.Backlog = d.Backlog
	}
	if cfg.BatchFlows <= 0 {
		cfg.BatchFlows = d.BatchFlows
	}
	if cfg.BatchEvery <= 0 {
		cfg.BatchEvery = d.BatchEvery
	}
	if cfg.TemplateSaveEvery <= 0 {
		cfg.TemplateSaveEvery = d.TemplateSaveEvery
	}
	c := &Collector{log: log, cfg: cfg, sink: sink, templates: templates, dec: netflow.NewDecoder(cfg.NetFlow)}
	c.m = newMetrics(reg, c.KernelDrops)
	c.guard = panics.New(reg, log, "flows")
	c.pool.New = func() any { b := make([]byte, 65536); return &b }
	c.groups.New = func() any { g := make([]datagram, 0, readBatch); return &g }
	return c
}

// Start loads the persisted templates and opens the listeners. With no
// address configured it does nothing.
func (c *Collector) Start() error {
	if c.cfg.Addr == "" && c.cfg.SFlowAddr == "" {
		return nil
	}
	if c.templates != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		rows, err := c.templates.FlowTemplates(ctx)
		cancel()
		ts := decodeTemplates(rows)
		if err != nil {
			c.log.Warn("stored flow templates not loaded", "error", err)
		} else if len(ts) > 0 {
			c.dec.LoadTemplates(ts)
			c.saved = c.dec.TemplatesChanged()
			c.log.Info("flow templates loaded", "count", len(ts))
		}
	}
	var sflowOnly []bool // of c.conns
	for _, l := range []struct {
		addr  string
		sflow bool
	}{{c.cfg.Addr, false}, {c.cfg.SFlowAddr, true}} {
		if l.addr == "" {
			continue
		}
		ua, err := net.ResolveUDPAddr("udp", l.addr)
		if err != nil {
			return c.fail(err)
		}
		conn, err := net.ListenUDP("udp", ua)
		if err != nil {
			return c.fail(err)
		}
		if c.cfg.ReadBuffer > 0 {
			udpsock.SetReadBuffer(conn, c.cfg.ReadBuffer)
		}
		c.conns = append(c.conns, conn)
		c.inodes.append(udpsock.Inode(conn))
		c.log.Info("flow listener started", "addr", conn.LocalAddr().String(), "sflow_only", l.sflow)
		sflowOnly = append(sflowOnly, l.sflow)
	}
	c.work = make([]chan *[]datagram, c.cfg.Workers)
	c.backlog = make([]atomic.Int64, c.cfg.Workers)
	for i := range c.work {
		c.work[i] = make(chan *[]datagram, max(c.cfg.Backlog/c.cfg.Workers, 1))
		c.workers.Add(1)
		go func() {
			defer c.workers.Done()
			// A panic (a decoder meeting a hostile datagram) loses the
			// worker's batch in hand, is counted, and the worker goes on.
			c.guard.Keep(nil, func() { c.worker(i) })
		}()
	}
	for i, conn := range c.conns {
		c.readers.Add(1)
		go func() {
			defer c.readers.Done()
			c.guard.Keep(nil, func() { c.read(conn, sflowOnly[i]) })
		}()
	}
	c.stop = make(chan struct{})
	c.saver.Add(1)
	go func() {
		defer c.saver.Done()
		c.guard.Keep(c.stop, c.saveLoop)
	}()
	return nil
}

func (c *Collector) fail(err error) error {
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.conns = nil
	return err
}

// Addrs are the bound listen addresses (flow port first).
func (c *Collector) Addrs() []net.Addr {
	var out []net.Addr
	for _, conn := range c.conns {
		out = append(out, conn.LocalAddr())
	}
	return out
}

// Stop closes the listeners, decodes what was received, flushes the last
// batches to the sink and persists the templates.
func (c *Collector) Stop() error {
	if len(c.conns) == 0 {
		return nil
	}
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.readers.Wait()
	for _, w := range c.work {
		close(w)
	}
	c.workers.Wait()
	close(c.stop)
	c.saver.Wait()
	c.conns = nil
	c.inodes.reset()
	return nil
}

// KernelDrops is the number of datagrams the kernel dropped on the
// collector's sockets because their buffers were full (Linux; 0 elsewhere).
func (c *Collector) KernelDrops() float64 {
	var n uint64
	for _, ino := range c.inodes.load() {
		n += udpsock.KernelDrops(ino)
	}
	return float64(n)
}

// inodeList is a small list read by the metrics scrape while Start
// and Stop write it.
type inodeList struct {
	mu sync.Mutex
	v  []uint64
}

func (a *inodeList) append(ino uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.v = append(a.v, ino)

}

func (a *inodeList) load() []uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]uint64(nil), a.v...)
}

func (a *inodeList) reset() {
	a.mu.Lock()
	a.v = nil
	a.mu.Unlock()
}

// readBatch is the number of datagrams one recvmmsg call may return: a
// syscall per datagram would cost more than decoding its flows.
const readBatch = 64

func (c *Collector) read(conn *net.UDPConn, sflowOnly bool) {
	br, err := udpsock.NewBatchReader(conn, readBatch)
	if err != nil {
		c.log.Error("flow listener cannot read", "error", err)
		return
	}
	msgs := make([]udpsock.Msg, readBatch)
	bufs := make([]*[]byte, readBatch)
	views := make([][]byte, readBatch)
	groups := make([]*[]datagram, len(c.work))
	for {
		for i := range bufs {
			if bufs[i] == nil {
				bufs[i] = c.pool.Get().(*[]byte)
				views[i] = *bufs[i]
			}
		}
		n, err := br.Read(views, msgs)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				for _, b := range bufs {
					if b != nil {
						c.pool.Put(b)
					}
				}
				return
			}
			continue
		}
		at := time.Now()
		for i := range n {
			addr := msgs[i].Addr
			w := record.Shard(addr, len(c.work))
			if groups[w] == nil {
				groups[w] = c.groups.Get().(*[]datagram)
			}
			*groups[w] = append(*groups[w], datagram{buf: bufs[i], n: msgs[i].N, from: addr, sflow: sflowOnly, at: at})
			bufs[i] = nil // the worker returns it to the pool
		}
		for w, g := range groups {
			if g == nil {
				continue
			}
			groups[w] = nil
			if c.backlog[w].Add(int64(len(*g))) <= int64(max(c.cfg.Backlog/len(c.work), 1)) {
				select {
				case c.work[w] <- g:
					continue
				default:
				}
			}
			c.backlog[w].Add(-int64(len(*g)))
			c.m.rejected.WithLabelValues("unknown", "backlog_full").Add(float64(len(*g)))
			c.release(g)
		}
	}
}

// release returns a group's buffers and the group to their pools.
func (c *Collector) release(g *[]datagram) {
	for i := range *g {
		c.pool.Put((*g)[i].buf)
		(*g)[i] = datagram{}
	}
	*g = (*g)[:0]
	c.groups.Put(g)
}

func (c *Collector) worker(w int) {
	work := c.work[w]
	batch := make([]record.Flow, 0, c.cfg.BatchFlows)
	tick := time.NewTicker(c.cfg.BatchEvery)
	defer tick.Stop()
	flush := func() {
		if len(batch) > 0 {
			n := len(batch)
			if c.sink.PutFlows(batch) {
				c.m.handed.Add(float64(n))
			} else {
				c.m.sinkFull.Add(float64(n))
				c.dropped.Add(uint64(n))
			}
			batch = batch[:0]
		}
	}
	for {
		select {
		case g, ok := <-work:
			if !ok {
				flush()
				return
			}
			for _, d := range *g {
				batch = c.decode(d, batch)
				if len(batch) >= c.cfg.BatchFlows {
					flush()
				}
			}
			c.backlog[w].Add(-int64(len(*g)))
			c.release(g)
		case <-tick.C:
			flush()
		}
	}
}

// decode dispatches one datagram by version and counts the outcome.
func (c *Collector) decode(d datagram, out []record.Flow) []record.Flow {
	data := (*d.buf)[:d.n]
	proto := Protocol(data)
	if d.sflow && proto != "sflow5" {
		c.m.rejected.WithLabelValues(proto, "not_sflow").Inc()
		return out
	}
	before := len(out)
	var err error
	switch proto {
	case "netflow5", "netflow9", "ipfix":
		var res netflow.Result
		out, res, err = c.dec.Decode(data, d.from, d.at, out)
		if res.MissingTemplate > 0 {
			c.m.templateMisses.WithLabelValues(proto).Add(float64(res.MissingTemplate))
		}
	case "sflow5":
		var res sflow.Result
		out, res, err = sflow.Decode(data, d.from, d.at, out)
		if res.SkippedSamples > 0 {
			c.m.skippedSamples.Add(float64(res.SkippedSamples))
		}
	default:
		c.m.rejected.WithLabelValues("unknown", "version").Inc()
		return out
	}
	if err != nil {
		c.m.rejected.WithLabelValues(proto, "malformed").Inc()
		return out[:before]
	}
	pc := c.m.byProto[proto]
	pc.decoded.Inc()
	pc.flows.Add(float64(len(out) - before))
	if len(out) > before {
		var octets, packets uint64
		for i := before; i < len(out); i++ {
			octets += out[i].Octets
			packets += out[i].Packets
		}
		ec := c.m.exporter(out[before].Exporter)
		ec.octets.Add(float64(octets))
		ec.packets.Add(float64(packets))
		c.retime(ec.state, out[before:], d.at)
	}
	return out
}

// Protocol names a datagram's protocol from its first bytes: netflow5,
// netflow9, ipfix, sflow5 or unknown.
func Protocol(data []byte) string {
	if len(data) < 4 {
		return "unknown"
	}
	switch binary.BigEndian.Uint16(data) {
	case 5:
		return "netflow5"
	case 9:
		return "netflow9"
	case 10:
		return "ipfix"
	case 0:
		if binary.BigEndian.Uint32(data) == 5 {
			return "sflow5"
		}
	}
	return "unknown"
}

// saveLoop persists the templates when they changed.
func (c *Collector) saveLoop() {
	t := time.NewTicker(c.cfg.TemplateSaveEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			c.saveTemplates()
			return
		case <-t.C:
			c.saveTemplates()
		}
	}
}

func (c *Collector) saveTemplates() {
	if c.templates == nil {
		return
	}
	gen := c.dec.TemplatesChanged()
	if gen == c.saved {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := encodeTemplates(c.dec.Templates())
	if err == nil {
		err = c.templates.SaveFlowTemplates(ctx, rows)
	}
	if err != nil {
		c.log.Warn("flow templates not saved", "error", err)
		return
	}
	c.saved = gen
}

// Dropped returns the flow records dropped because the ingest queue was
// full, since start (the network health score reads it).
func (c *Collector) Dropped() uint64 { return c.dropped.Load() }
