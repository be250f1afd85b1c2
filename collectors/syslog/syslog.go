// Package syslog is the hub's syslog receiver (spec 2.11, /api/v1/syslog):
// one UDP listener whose datagrams are parsed as RFC 3164 or RFC 5424
// (Parse) and handed in batches to the ingest path, a record.Sink. It is a
// producer in the architecture: it imports only store/record, and knows
// nothing of the queue or the database behind the sink.
//
// Flow of a datagram: the read loop reads it into a pooled buffer of
// MaxMessage+1 bytes (so an oversize one is seen, and rejected, without a
// 64 KiB buffer per read) and passes it over a bounded backlog to Workers
// goroutines. Each worker parses with its own parser, appends to its own
// batch and hands the batch to the sink when BatchSize is reached or
// FlushInterval has passed. Parsing off the read loop keeps the socket
// drained at the rate of a single syscall per datagram.
//
// Policies when full: the backlog blocks the read loop, so bursts queue
// in the socket buffer (ReadBuffer) and what overflows it is counted by
// the kernel (netmon_syslog_kernel_drops_total). The sink never blocks: a
// refused batch is counted in netmon_syslog_dropped_total{reason=
// "queue_full"}. Every datagram read is counted once: received =
// accepted + rejected{reason} + dropped{reason} (RELIABILITY.md,
// conservation).
package syslog

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
	"netmon/collectors/udpsock"
	"netmon/store/record"
)

// Receiver is the syslog UDP receiver. Build it with New, then Start and
// Stop it once each.
type Receiver struct {
	// guard recovers a panic of the reader or a worker (counted in
	// netmon_panics_total{component="syslog"}) and runs it again.
	guard *panics.Guard
	log   *slog.Logger
	cfg   Config
	sink  record.Sink
	m     *metrics

	bufs sync.Pool // *[]byte of MaxMessage+1 bytes
	// work has one queue per worker; a sender always goes to the same one,
	// so its messages are parsed and batched in the order they arrived.
	work []chan datagram

	lifeMu  sync.Mutex
	started bool
	stopped bool
	conn    *net.UDPConn
	inode   atomic.Uint64 // the socket's inode, for the kernel drop counter
	reader  sync.WaitGroup
	workers sync.WaitGroup
}

// datagram is one read datagram waiting for a worker.
type datagram struct {
	buf  *[]byte
	n    int
	from netip.Addr
	at   time.Time
}

// New builds a receiver writing into sink; it does no I/O. Metrics are
// registered on reg when it is not nil. Zero Config fields take their
// DefaultConfig value, but for Addr ("" = off).
func New(log *slog.Logger, cfg Config, sink record.Sink, reg prometheus.Registerer) *Receiver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	r := &Receiver{log: log, cfg: cfg, sink: sink}
	r.m = newMetrics(reg, func() float64 { return float64(udpsock.KernelDrops(r.inode.Load())) })
	r.guard = panics.New(reg, log, "syslog")
	size := cfg.MaxMessage + 1
	r.bufs.New = func() any {
		b := make([]byte, size)
		return &b
	}
	return r
}

// Start binds the UDP socket and starts the read loop and the workers.
// With an empty Addr it does nothing. It fails when the address cannot be
// bound.
func (r *Receiver) Start() error {
	r.lifeMu.Lock()
	defer r.lifeMu.Unlock()
	if r.started {
		return errors.New("syslog receiver already started")
	}
	if r.cfg.Addr == "" {
		r.log.Info("syslog receiver off")
		return nil
	}
	addr, err := net.ResolveUDPAddr("udp", r.cfg.Addr)
	if err != nil {
		return fmt.Errorf("resolve syslog address %q: %w", r.cfg.Addr, err)
	}
	conn, err := net.ListenUDP("udp", addr)
	if err != nil {
		return fmt.Errorf("listen syslog on %q: %w", r.cfg.Addr, err)
	}
	got := udpsock.SetReadBuffer(conn, r.cfg.ReadBuffer)
	r.inode.Store(udpsock.Inode(conn))
	r.conn = conn
	r.started = true
	r.work = make([]chan datagram, r.cfg.Workers)
	for i := range r.work {
		r.work[i] = make(chan datagram, max(r.cfg.Backlog/r.cfg.Workers, 1))
		r.workers.Add(1)
		go func(work chan datagram) {
			defer r.workers.Done()
			// A panic (a parser meeting a hostile datagram) loses that
			// worker's batch in hand, is counted, and the worker goes on.
			r.guard.Keep(nil, func() { r.worker(work) })
		}(r.work[i])
	}
	r.reader.Add(1)
	go func() {
		defer r.reader.Done()
		r.guard.Keep(nil, r.read)
	}()
	r.log.Info("syslog receiver started", "addr", conn.LocalAddr().String(),
		"read_buffer", got, "workers", r.cfg.Workers, "max_message", r.cfg.MaxMessage)
	return nil
}

// Stop closes the socket, lets the workers parse what was read and hand
// their last batches to the sink, and returns once they are done. It is
// safe to call more than once and before Start.
func (r *Receiver) Stop() error {
	r.lifeMu.Lock()
	defer r.lifeMu.Unlock()
	if !r.started || r.stopped {
		return nil
	}
	r.stopped = true
	err := r.conn.Close()
	r.reader.Wait()
	for _, w := range r.work {
		close(w)
	}
	r.workers.Wait()
	r.inode.Store(0)
	r.log.Info("syslog receiver stopped")
	if err != nil {
		return fmt.Errorf("close syslog socket: %w", err)
	}
	return nil
}

// Addr is the bound address (useful with port 0), nil when not started.
func (r *Receiver) Addr() net.Addr {
	r.lifeMu.Lock()
	defer r.lifeMu.Unlock()
	if r.conn == nil {
		return nil
	}
	return r.conn.LocalAddr()
}

// read is the read loop: one syscall per datagram, counting and sizing,
// then the backlog. It ends when Stop closes the socket.
func (r *Receiver) read() {
	for {
		bp := r.bufs.Get().(*[]byte)
		n, from, err := r.conn.ReadFromUDPAddrPort(*bp)
		if err != nil {
			r.bufs.Put(bp)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Not seen on an unconnected UDP socket in practice; pause so
			// that a persistent error cannot spin a core.
			r.log.Warn("syslog read failed", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		r.m.received.Inc()
		if n > r.cfg.MaxMessage {
			r.m.rejOversize.Inc()
			r.bufs.Put(bp)
			continue
		}
		addr := from.Addr().Unmap()
		r.work[record.Shard(addr, len(r.work))] <- datagram{buf: bp, n: n, from: addr, at: time.Now()}
	}
}

// worker parses datagrams into its own batch and hands the batch to the
// sink when full or every FlushInterval.
func (r *Receiver) worker(work chan datagram) {
	p := newParser()
	batch := make([]record.SyslogEvent, 0, r.cfg.BatchSize)
	// altered messages of the batch by reason, counted when the sink
	// takes the batch: a dropped batch is counted as dropped only.
	var altUTF8, altNUL int
	tick := time.NewTicker(r.cfg.FlushInterval)
	defer tick.Stop()
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if r.sink.PutSyslog(batch) {
			// altered before accepted: a reader that sees the batch
			// accepted sees its alterations
			r.m.altUTF8.Add(float64(altUTF8))
			r.m.altNUL.Add(float64(altNUL))
			r.m.accepted.Add(float64(len(batch)))
		} else {
			r.m.dropFull.Add(float64(len(batch)))
		}
		altUTF8, altNUL = 0, 0
		clear(batch) // the sink copied what it kept; let the strings go
		batch = batch[:0]
	}
	for {
		select {
		case d, ok := <-work:
			if !ok {
				flush()
				return
			}
			ev, err := p.parse((*d.buf)[:d.n], d.from, d.at)
			r.bufs.Put(d.buf) // ev holds copies, never the buffer
			if err != nil {
				r.m.reject(err)
				continue
			}
			if p.altered&alteredInvalidUTF8 != 0 {
				altUTF8++
			}
			if p.altered&alteredNUL != 0 {
				altNUL++
			}
			batch = append(batch, ev)
			if len(batch) >= r.cfg.BatchSize {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}
