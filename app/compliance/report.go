package compliance

import (
	"context"
	"errors"
)

// ErrQueueFull is AppendReport's answer when the compliance queue is full
// and the report's record was dropped (and counted).
var ErrQueueFull = errors.New("compliance queue full: report hash not appended")

// AppendReport appends a generated report's hashes to the compliance log
// as a "report" record (fields sha256, data_sha256, filename, all plain:
// a hash and a file name are no personal data). The record is chained,
// checkpointed and sealed like every other, so an evidence bundle that
// `netmon compliance verify` accepts proves the report with that SHA-256
// existed when the record was appended. Off, it does nothing.
func (s *Service) AppendReport(ctx context.Context, sha256, dataSHA256, filename string) error {
	if !s.cfg.Enabled {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.enqueue(pending{kind: KindReport, ts: s.deps.Now().Unix(), vals: []string{sha256, dataSHA256, filename}}) {
		return ErrQueueFull
	}
	return nil
}
