package pcaprec

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Sizes of the classic pcap format.
const (
	fileHeaderLen   = 24
	recordHeaderLen = 16
	// defaultSnaplen is used when Start gets none: libpcap's default.
	defaultSnaplen = 262144
	// writeBuffer batches the small per-frame writes of the hot path.
	writeBuffer = 256 << 10
)

var (
	// ErrAlreadyRecording is returned by Start while a recording runs.
	ErrAlreadyRecording = errors.New("a recording is already running")
	// ErrNotRecording is returned by Stop when no recording runs.
	ErrNotRecording = errors.New("no recording is running")
)

// Status is the recording state of GET /api/record/status (spec 2.7).
type Status struct {
	Recording bool   `json:"recording"`
	File      string `json:"file"`    // current (or last) file name, in Dir
	Packets   int64  `json:"packets"` // frames of the whole recording, all files
	Bytes     int64  `json:"bytes"`   // bytes written to its files, headers included
	// Error is the write error that ended the last recording (disk full,
	// ...); cleared by the next Start.
	Error string `json:"error"`
}

// StopResponse is the answer of POST /api/record/stop (spec 2.7). Stop
// returns a Status; its StopResponse method gives this shape.
type StopResponse struct {
	OK      bool   `json:"ok"`
	File    string `json:"file"` // the last file of the recording
	Packets int64  `json:"packets"`
	Bytes   int64  `json:"bytes"`
}

// StopResponse converts the Status returned by Stop to the stop response;
// ok is false when the recording ended with an error.
func (s Status) StopResponse() StopResponse {
	return StopResponse{OK: s.Error == "", File: s.File, Packets: s.Packets, Bytes: s.Bytes}
}

// Recorder writes frames to rotating pcap files. The zero value is not
// usable; call New.
type Recorder struct {
	cfg Config
	// now gives the time used in file names (local time zone); tests set
	// their own clock.
	now func() time.Time
	// active mirrors cur != nil, so Write can skip the lock while idle.
	active atomic.Bool

	mu sync.Mutex
	// Set while recording.
	root     *os.Root
	cur      *os.File
	buf      *bufio.Writer
	pw       *pcapgo.Writer
	device   string
	linkType layers.LinkType
	snaplen  int
	curBytes int64 // size of the current file, buffered bytes included
	curPkts  int64
	// Kept after the recording ends, for Status.
	file    string
	packets int64
	bytes   int64
	lastErr string
}

// New returns an idle Recorder. It touches no file.
func New(cfg Config) *Recorder {
	return &Recorder{cfg: cfg.withDefaults(), now: time.Now}
}

// Start begins a recording of frames of the given link type in a new file
// <YYYY-MM-DD_HH-MM-SS>_<device>.pcap in Dir, and returns that file name.
// The device part keeps only [A-Za-z0-9._-]. A snaplen of 0 means 262144.
func (r *Recorder) Start(device string, linkType layers.LinkType, snaplen int) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		return "", ErrAlreadyRecording
	}
	if snaplen <= 0 {
		snaplen = defaultSnaplen
	}
	if err := os.MkdirAll(r.cfg.Dir, 0o750); err != nil {
		return "", fmt.Errorf("create record dir: %w", err)
	}
	root, err := os.OpenRoot(r.cfg.Dir)
	if err != nil {
		return "", fmt.Errorf("open record dir: %w", err)
	}
	r.root, r.device, r.linkType, r.snaplen = root, sanitize(device), linkType, snaplen
	r.packets, r.bytes, r.lastErr = 0, 0, ""
	if err := r.openFileLocked(); err != nil {
		_ = root.Close()
		r.root = nil
		return "", err
	}
	r.active.Store(true)
	return r.file, nil
}

// openFileLocked creates the next file of the recording and writes its
// header. A name taken in the same second gets a -1, -2, ... suffix; the
// file is created with O_EXCL, so an existing file is never overwritten.
func (r *Recorder) openFileLocked() error {
	stamp := r.now().Local().Format("2006-01-02_15-04-05")
	var f *os.File
	var name string
	for i := 0; ; i++ {
		name = stamp + "_" + r.device + ".pcap"
		if i > 0 {
			name = stamp + "_" + r.device + "-" + strconv.Itoa(i) + ".pcap"
		}
		var err error
		f, err = r.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i >= 999 {
			return fmt.Errorf("create pcap file: %w", err)
		}
	}
	buf := bufio.NewWriterSize(f, writeBuffer)
	pw := pcapgo.NewWriter(buf)
	if err := pw.WriteFileHeader(uint32(r.snaplen), r.linkType); err != nil {
		_ = f.Close()
		return fmt.Errorf("write pcap header to %s: %w", name, err)
	}
	r.cur, r.buf, r.pw, r.file = f, buf, pw, name
	r.curBytes, r.curPkts = fileHeaderLen, 0
	r.bytes += fileHeaderLen
	return nil
}

// Write appends one frame to the recording; it is a no-op returning nil
// while no recording runs, so the capture loop may call it for every frame.
// Frames longer than the snaplen are truncated. When the frame would push
// the file past MaxBytes, the file is closed and a new one started (a frame
// larger than MaxBytes on its own still gets written, alone in its file).
//
// A write error (disk full, ...) ends the recording: it is returned once,
// kept in Status.Error, and later Writes are no-ops again.
func (r *Recorder) Write(data []byte, ci gopacket.CaptureInfo) error {
	if !r.active.Load() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil
	}
	if len(data) > r.snaplen {
		data = data[:r.snaplen]
	}
	ci.CaptureLength = len(data)
	ci.Length = max(ci.Length, len(data))
	size := int64(recordHeaderLen + len(data))
	if r.curBytes+size > r.cfg.MaxBytes && r.curPkts > 0 {
		if err := r.closeFileLocked(false); err != nil {
			return r.failLocked(err)
		}
		if err := r.openFileLocked(); err != nil {
			return r.failLocked(err)
		}
	}
	if err := r.pw.WritePacket(ci, data); err != nil {
		return r.failLocked(fmt.Errorf("write to %s: %w", r.file, err))
	}
	r.curBytes += size
	r.curPkts++
	r.bytes += size
	r.packets++
	return nil
}

// closeFileLocked flushes and closes the current file. With sync it also
// waits for the disk: Stop does, rotation does not, because rotation runs
// on the capture goroutine and a sync of a 100 MiB file can stall it long
// enough for the kernel ring to overflow.
func (r *Recorder) closeFileLocked(sync bool) error {
	f, buf := r.cur, r.buf
	r.cur, r.buf, r.pw = nil, nil, nil
	err := buf.Flush()
	if err == nil && sync {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("close %s: %w", r.file, err)
	}
	return nil
}

// failLocked ends the recording after a write error.
func (r *Recorder) failLocked(err error) error {
	if r.cur != nil {
		_ = r.cur.Close() // the write error is the one worth reporting
	}
	r.endLocked()
	r.lastErr = err.Error()
	return err
}

// endLocked returns to idle, keeping file, packets and bytes for Status.
func (r *Recorder) endLocked() {
	r.active.Store(false)
	if r.root != nil {
		_ = r.root.Close() // a directory handle: nothing to lose
	}
	r.root, r.cur, r.buf, r.pw = nil, nil, nil, nil
}

// Stop flushes, syncs and closes the file and returns the final Status:
// not recording, the last file's name, and packets and bytes of the whole
// recording (all rotated files); Status.StopResponse gives the API's shape.
// A failure to flush is returned and kept in Status.Error. Stop while idle
// returns ErrNotRecording.
func (r *Recorder) Stop() (Status, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return r.statusLocked(), ErrNotRecording
	}
	err := r.closeFileLocked(true)
	r.endLocked()
	if err != nil {
		r.lastErr = err.Error()
	}
	return r.statusLocked(), err
}

// Status returns the current or last recording's state.
func (r *Recorder) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusLocked()
}

func (r *Recorder) statusLocked() Status {
	return Status{Recording: r.cur != nil, File: r.file, Packets: r.packets, Bytes: r.bytes, Error: r.lastErr}
}

// sanitize keeps the characters of a device name that are safe in a file
// name and in a download URL; others become '_'.
func sanitize(device string) string {
	b := []byte(device)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "capture"
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return string(b)
}
