package api

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/capture"
	"netmon/capture/pcaprec"
)

// CaptureStart is the body of POST /api/capture/start.
type CaptureStart struct {
	Device string `json:"device" jsonschema:"description=interface name, e.g. eth0"`
}

// CaptureResult is {ok:true} or {ok:false, error} (spec section 3).
type CaptureResult struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// RecordStarted is the answer to POST /api/record/start.
type RecordStarted struct {
	OK   bool   `json:"ok"`
	File string `json:"file"`
}

type captureStartIn struct {
	Body CaptureStart `body:"json"`
}

type downloadIn struct {
	File string `query:"file" required:"true" doc:"file name as listed by /api/record/files (<YYYY-MM-DD_HH-MM-SS>_<device>.pcap)"`
}

func (s *Server) status(*gin.Context, *router.NoInput) (capture.Snapshot, error) {
	return s.deps.Capture.Snapshot(), nil
}

func (s *Server) interfaces(*gin.Context, *router.NoInput) ([]capture.Interface, error) {
	return s.deps.Capture.Interfaces()
}

// audited records an operate-level action in the chain (spec 6.5).
func (s *Server) audited(c *gin.Context, action, target, result, detail string) {
	if s.deps.AuditLog == nil {
		return
	}
	id := callerOf(c)
	ev := audit.Event(c, audit.Actor{Username: id.Username, Role: string(id.Role), ActorType: string(id.Actor)}, action, target, result, detail, nil, nil)
	if _, err := s.deps.AuditLog.AppendAudit(c, ev); err != nil {
		s.log.ErrorContext(c, "audit append failed", "action", action, "error", err)
	}
}

func (s *Server) captureStart(c *gin.Context, in *captureStartIn) (CaptureResult, error) {
	if err := s.deps.Capture.StartCapture(in.Body.Device); err != nil {
		s.audited(c, audit.ActionCaptureStart, in.Body.Device, audit.ResultError, err.Error())
		return CaptureResult{OK: false, Error: err.Error()}, nil
	}
	s.audited(c, audit.ActionCaptureStart, in.Body.Device, audit.ResultOK, "")
	return CaptureResult{OK: true}, nil
}

func (s *Server) captureStop(c *gin.Context, _ *router.NoInput) (CaptureResult, error) {
	if err := s.deps.Capture.StopCapture(); err != nil {
		return CaptureResult{}, err
	}
	s.audited(c, audit.ActionCaptureStop, s.deps.Capture.Snapshot().Device, audit.ResultOK, "")
	return CaptureResult{OK: true}, nil
}

func (s *Server) recordStart(c *gin.Context, _ *router.NoInput) (RecordStarted, error) {
	file, err := s.deps.Capture.StartRecording()
	switch {
	case errors.Is(err, capture.ErrCaptureOff), errors.Is(err, pcaprec.ErrAlreadyRecording):
		return RecordStarted{}, errs.Conflictf("%v", err)
	case errors.Is(err, capture.ErrNoRecorder):
		return RecordStarted{}, errs.NotFoundf("%v", err)
	case err != nil:
		return RecordStarted{}, fmt.Errorf("start the recording: %w", err)
	}
	s.audited(c, audit.ActionRecordStart, file, audit.ResultOK, "")
	return RecordStarted{OK: true, File: file}, nil
}

func (s *Server) recordStop(c *gin.Context, _ *router.NoInput) (pcaprec.StopResponse, error) {
	st, err := s.deps.Capture.StopRecording()
	switch {
	case errors.Is(err, pcaprec.ErrNotRecording):
		return pcaprec.StopResponse{}, errs.Conflictf("not recording")
	case errors.Is(err, capture.ErrNoRecorder):
		return pcaprec.StopResponse{}, errs.NotFoundf("%v", err)
	case err != nil && st.File == "":
		return pcaprec.StopResponse{}, err
	}
	s.audited(c, audit.ActionRecordStop, st.File, audit.ResultOK, strconv.FormatInt(st.Packets, 10)+" packets")
	return st.StopResponse(), nil
}

func (s *Server) recordStatus(*gin.Context, *router.NoInput) (pcaprec.Status, error) {
	return s.deps.Capture.RecordStatus(), nil
}

func (s *Server) recordFiles(*gin.Context, *router.NoInput) ([]pcaprec.FileEntry, error) {
	fs, err := s.deps.Capture.RecordFiles()
	if fs == nil && err == nil {
		fs = []pcaprec.FileEntry{}
	}
	return fs, err
}

// recordDownload serves one recording as an attachment. The name is
// checked by the recorder (a plain *.pcap directly in the record
// directory, opened through os.Root): anything else is 400 or 404.
func (s *Server) recordDownload(c *gin.Context, in *downloadIn) error {
	f, st, err := s.deps.Capture.OpenRecording(in.File)
	switch {
	case errors.Is(err, pcaprec.ErrBadName):
		return invalidField("file", "query parameter \"file\": must be the name of a .pcap file in the record directory")
	case errors.Is(err, pcaprec.ErrNotFound), errors.Is(err, capture.ErrNoRecorder):
		return errs.NotFoundf("no such recording")
	case err != nil:
		return err
	}
	defer f.Close()
	h := c.Writer.Header()
	h.Set("Content-Type", "application/vnd.tcpdump.pcap")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": st.Name()}))
	h.Set("Content-Length", strconv.FormatInt(st.Size(), 10))
	c.Status(http.StatusOK)
	if c.Request.Method != http.MethodHead {
		_, _ = io.Copy(c.Writer, f)
	}
	return nil
}
