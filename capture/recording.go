package capture

import (
	"errors"
	"io/fs"
	"os"

	"netmon/capture/pcaprec"
	"netmon/capture/source"
)

var (
	// ErrCaptureOff answers a recording start while no capture runs
	// (spec section 3: capture must be on first).
	ErrCaptureOff = errors.New("capture is not running: start the capture first, then the recording")
	// ErrNoRecorder is returned when the hub has no record directory.
	ErrNoRecorder = errors.New("recording is not available on this hub")
)

// StartRecording starts a PCAP recording of the running capture.
func (c *Capture) StartRecording() (string, error) {
	rec := c.deps.Recorder
	if rec == nil {
		return "", ErrNoRecorder
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return "", ErrCaptureOff
	}
	return rec.Start(c.device, c.src.LinkType(), snaplenOf(c.cfg))
}

// StopRecording ends the recording and returns its totals.
func (c *Capture) StopRecording() (pcaprec.Status, error) {
	rec := c.deps.Recorder
	if rec == nil {
		return pcaprec.Status{}, ErrNoRecorder
	}
	return rec.Stop()
}

// RecordStatus is the spec 2.7 status.
func (c *Capture) RecordStatus() pcaprec.Status {
	if c.deps.Recorder == nil {
		return pcaprec.Status{}
	}
	return c.deps.Recorder.Status()
}

// RecordFiles lists the recordings, newest first.
func (c *Capture) RecordFiles() ([]pcaprec.FileEntry, error) {
	if c.deps.Recorder == nil {
		return []pcaprec.FileEntry{}, nil
	}
	return c.deps.Recorder.Files()
}

// OpenRecording opens a recording for download (name checked by the
// recorder: plain *.pcap directly in the record directory).
func (c *Capture) OpenRecording(name string) (*os.File, fs.FileInfo, error) {
	if c.deps.Recorder == nil {
		return nil, nil, ErrNoRecorder
	}
	return c.deps.Recorder.Open(name)
}

func snaplenOf(cfg Config) int {
	if cfg.Source.Snaplen > 0 {
		return cfg.Source.Snaplen
	}
	return source.DefaultSnaplen
}
