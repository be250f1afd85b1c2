package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"netmon/app/panics"
	"netmon/capture/pcaprec"
	"netmon/capture/source"
	"netmon/store/record"
)

// MinuteSink receives finished minutes (the hub writes them to the
// store); capture itself never touches the database.
type MinuteSink interface {
	AddTrafficMinute(ctx context.Context, m record.TrafficMinute) error
	AddRemoteMinute(ctx context.Context, ts int64, rs []record.RemoteTraffic) error
}

// Deps are the capture component's collaborators.
type Deps struct {
	// Open opens a packet source; nil means source.Open with Config.Source.
	Open func(device string) (source.Source, error)
	// Addrs returns the device's own addresses; nil reads them from the OS.
	Addrs func(device string) ([]netip.Prefix, error)
	// Recorder writes PCAP recordings; nil disables recording.
	Recorder *pcaprec.Recorder
	// Enrich gives countries and ASNs; may be nil.
	Enrich Enricher
	// Minutes receives finished minutes; may be nil.
	Minutes MinuteSink
	// Now is the clock (tests).
	Now func() time.Time
	// Panics recovers a panic of the packet loop (which then runs again)
	// or of one minute flush, counted; nil still recovers, uncounted.
	Panics *panics.Guard
	// Memory keeps the interface of a running capture across restarts;
	// nil: a restarted hub starts with the capture stopped.
	Memory Memory
}

// Memory remembers which interface the capture runs on, so that a hub
// restart resumes it (the operator stopped nothing): Remember(device) on
// every start, Remember("") when a person stops it, Remembered at Start
// (*store.DB keeps it in a setting).
type Memory interface {
	RememberCaptureDevice(ctx context.Context, device string) error
	RememberedCaptureDevice(ctx context.Context) (string, error)
}

// Capture is the hub's own capture: start/stop on an interface, the stats
// engine fed from it, the PCAP recording, and the minute history.
type Capture struct {
	log  *slog.Logger
	cfg  Config
	deps Deps

	mu        sync.Mutex
	running   bool
	device    string
	lastErr   string
	src       source.Source
	engine    *Engine
	startedAt time.Time
	stoppedAt time.Time
	stopLoop  chan struct{}
	loopDone  chan struct{}
	flushed   int64 // the last minute (start ts) written
	// dropsFlushed is the source's kernel drop count already written
	// into a minute (Stats is cumulative since the source opened).
	dropsFlushed uint64

	stopFlush chan struct{}
	flushWG   sync.WaitGroup
}

// New returns the component; it does no I/O.
func New(log *slog.Logger, cfg Config, deps Deps) *Capture {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Open == nil {
		opts := cfg.Source
		deps.Open = func(device string) (source.Source, error) { return source.Open(device, opts) }
	}
	if deps.Addrs == nil {
		deps.Addrs = interfaceAddrs
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = 10 * time.Second
	}
	return &Capture{log: log, cfg: cfg, deps: deps}
}

// Start begins the minute flusher and resumes the capture on the
// remembered interface. A resume that fails (the interface is gone) leaves
// the capture stopped with the reason in the snapshot's error; the hub
// starts anyway.
func (c *Capture) Start() error {
	if c.deps.Memory != nil && c.cfg.Enabled {
		dev, err := c.deps.Memory.RememberedCaptureDevice(context.Background())
		switch {
		case err != nil:
			c.log.Warn("capture interface not read", "err", err)
		case dev != "":
			if err := c.StartCapture(dev); err != nil {
				c.mu.Lock()
				c.device, c.lastErr = dev, fmt.Sprintf("resume on %s: %v", dev, err)
				c.mu.Unlock()
				c.log.Warn("capture not resumed", "device", dev, "err", err)
			} else {
				c.log.Info("capture resumed", "device", dev)
			}
		}
	}
	c.stopFlush = make(chan struct{})
	c.flushWG.Add(1)
	go func() {
		defer c.flushWG.Done()
		t := time.NewTicker(c.cfg.FlushEvery)
		defer t.Stop()
		for {
			select {
			case <-c.stopFlush:
				return
			case <-t.C:
				_ = c.deps.Panics.Do(func() { c.flush(false) })
			}
		}
	}()
	return nil
}

// Stop stops a running capture (closing its recording) and the flusher.
// The interface stays remembered: the next start resumes it.
func (c *Capture) Stop() error {
	err := c.stopCapture()
	if c.stopFlush != nil {
		close(c.stopFlush)
		c.flushWG.Wait()
		c.stopFlush = nil
	}
	return err
}

// Enabled reports -capture.
func (c *Capture) Enabled() bool { return c.cfg.Enabled }

// ErrDisabled is returned by StartCapture with -capture=false.
var ErrDisabled = errors.New("hub-local capture is disabled on this hub (-capture=false)")

// StartCapture opens device and starts counting; counters reset at every
// start (spec section 3). The error text is shown to the user as is.
func (c *Capture) StartCapture(device string) error {
	if !c.cfg.Enabled {
		return ErrDisabled
	}
	if device == "" {
		return errors.New("device is required")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return fmt.Errorf("capture already running on %s; stop it first", c.device)
	}
	nets, err := c.deps.Addrs(device)
	if err != nil {
		return err
	}
	src, err := c.deps.Open(device)
	if err != nil {
		return err
	}
	pending := c.collectLocked(true) // the previous capture's last minutes
	defer c.write(pending)
	c.engine = newEngine(nets, src, c.deps)
	c.src, c.device, c.lastErr, c.running = src, device, "", true
	c.dropsFlushed = 0
	c.startedAt = c.deps.Now()
	c.flushed = c.startedAt.Truncate(time.Minute).Unix() - 60
	c.stopLoop, c.loopDone = make(chan struct{}), make(chan struct{})
	go func(src source.Source, e *Engine, stop, done chan struct{}) {
		defer close(done)
		// A panic (the decoders meeting a hostile packet) loses that
		// packet, is counted, and the loop reads on.
		c.deps.Panics.Keep(stop, func() { c.loop(src, e, stop) })
	}(src, c.engine, c.stopLoop, c.loopDone)
	c.log.Info("capture started", "device", device, "local_nets", len(nets))
	c.remember(device)
	return nil
}

// remember records device ("" once stopped by a person) for the resume;
// a failure is logged: the capture itself runs or stops as asked.
func (c *Capture) remember(device string) {
	if c.deps.Memory == nil {
		return
	}
	if err := c.deps.Memory.RememberCaptureDevice(context.Background(), device); err != nil {
		c.log.Warn("capture interface not remembered", "device", device, "err", err)
	}
}

// StopCapture stops the capture as a person asks: an open recording is
// closed cleanly, and a restarted hub leaves the capture stopped.
func (c *Capture) StopCapture() error {
	err := c.stopCapture()
	c.remember("")
	return err
}

// stopCapture stops a running capture, closing its recording.
func (c *Capture) stopCapture() error {
	c.mu.Lock()
	if !c.running {
		c.mu.Unlock()
		return nil
	}
	stop, done, src := c.stopLoop, c.loopDone, c.src
	c.mu.Unlock()
	close(stop)
	<-done
	err := src.Close()
	if _, rerr := c.StopRecording(); rerr != nil && !errors.Is(rerr, pcaprec.ErrNotRecording) && !errors.Is(rerr, ErrNoRecorder) {
		err = errors.Join(err, rerr)
	}
	c.mu.Lock()
	c.running = false
	c.stoppedAt = c.deps.Now()
	pending := c.collectLocked(true)
	c.mu.Unlock()
	c.write(pending)
	c.log.Info("capture stopped", "device", c.device)
	return err
}

// loop reads frames until stopped, the source ends, or it fails.
func (c *Capture) loop(src source.Source, e *Engine, stop chan struct{}) {
	rec := c.deps.Recorder
	for {
		select {
		case <-stop:
			return
		default:
		}
		data, ci, err := src.ReadPacketData()
		switch {
		case err == nil:
		case errors.Is(err, source.ErrTimeout):
			continue
		case errors.Is(err, io.EOF):
			return
		default:
			c.mu.Lock()
			c.lastErr = err.Error()
			c.mu.Unlock()
			c.log.Error("capture read failed", "error", err)
			return
		}
		e.Process(data, ci)
		if rec != nil {
			// A no-op while idle; a failing recording stops itself and
			// reports in its status.
			_ = rec.Write(data, ci)
		}
	}
}

// Snapshot is the spec 2.1 snapshot of the current (or last) capture.
func (c *Capture) Snapshot() Snapshot {
	c.mu.Lock()
	e, src, running, device, lastErr := c.engine, c.src, c.running, c.device, c.lastErr
	c.mu.Unlock()
	var s Snapshot
	if e != nil {
		s = e.Snapshot()
	} else {
		s = emptySnapshot()
	}
	s.Running, s.Device, s.Error = running, device, lastErr
	if !c.cfg.Enabled {
		s.Error = ErrDisabled.Error()
	}
	if running && src != nil {
		if st, err := src.Stats(); err == nil {
			s.Dropped = int64(st.Dropped)
		}
	}
	return s
}

func emptySnapshot() Snapshot {
	return Snapshot{Protocols: map[string]int64{}, TopEndpoints: []Endpoint{}, TopPorts: []Port{}, TopDomains: []Domain{}, History: []Bucket{}}
}

// interfaceAddrs reads a device's addresses from the OS.
func interfaceAddrs(device string) ([]netip.Prefix, error) {
	ifi, err := net.InterfaceByName(device)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", source.ErrNoSuchInterface, device)
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, fmt.Errorf("addresses of %s: %w", device, err)
	}
	var out []netip.Prefix
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if p, err := netip.ParsePrefix(n.String()); err == nil {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// Interface is a network interface of the host as GET /api/interfaces
// lists it (an alias: the API's document names it after capture/source).
type Interface = source.Interface

// Interfaces lists the host's network interfaces with their addresses,
// counters and whether a capture could open on them: the API asks the
// capture component, never the source package.
func (c *Capture) Interfaces() ([]Interface, error) {
	ifs, err := source.Interfaces()
	if ifs == nil && err == nil {
		ifs = []Interface{}
	}
	return ifs, err
}
