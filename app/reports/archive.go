package reports

import (
	"context"
	"errors"
	"fmt"
	"time"

	"netmon/app/errs"
	"netmon/store"
)

// Archive list bounds.
const (
	defaultArchiveLimit = 100
	maxArchiveLimit     = 1000
)

func entryOf(a store.ReportArchive) ArchiveEntry {
	return ArchiveEntry{ID: a.ID, ScheduleID: a.ScheduleID, Type: a.Type, Format: a.Format, Site: a.Site, Days: a.Days,
		From: a.From, To: a.To, Filename: a.Filename, Size: a.Size, SHA256: a.SHA256, DataSHA256: a.DataSHA256,
		Delivery: a.Delivery, GeneratedAt: a.GeneratedAt, GeneratedBy: a.GeneratedBy}
}

// errArchiveNotFound is the answer for a missing id and for another
// site's id alike.
func errArchiveNotFound(id int64) error { return errs.NotFoundf("archived report %d not found", id) }

// ListArchive returns the archived reports of site ("" every site),
// newest first; limit 0 is 100, at most 1000.
func (s *Service) ListArchive(ctx context.Context, site string, limit int) ([]ArchiveEntry, error) {
	if limit <= 0 {
		limit = defaultArchiveLimit
	}
	limit = min(limit, maxArchiveLimit)
	rows, err := s.deps.DB.ListReportArchive(ctx, site, limit)
	if err != nil {
		return nil, err
	}
	out := make([]ArchiveEntry, len(rows))
	for i, r := range rows {
		out[i] = entryOf(r)
	}
	return out, nil
}

// OpenArchive returns archived report id of site ("" any site) with its
// body; another site's id is NotFound like a missing one.
func (s *Service) OpenArchive(ctx context.Context, site string, id int64) (ArchiveEntry, []byte, error) {
	a, err := s.deps.DB.GetReportArchive(ctx, site, id)
	if errors.Is(err, store.ErrNotFound) {
		return ArchiveEntry{}, nil, errArchiveNotFound(id)
	}
	if err != nil {
		return ArchiveEntry{}, nil, err
	}
	return entryOf(a), a.Body, nil
}

// DeleteArchive deletes archived report id of site with its audit record
// report.archive.delete (one transaction).
func (s *Service) DeleteArchive(ctx context.Context, who store.AuditActor, site string, id int64) error {
	target := fmt.Sprintf("reports/archive/%d", id)
	err := s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteReportArchive(ctx, site, id); err != nil {
			return err
		}
		_, err := tx.AppendAudit(ctx, s.deps.Auditor.Event(ctx, who, ActionArchiveDelete, target, "ok", "", nil, nil))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return errArchiveNotFound(id)
	}
	return err
}

// prune applies RetentionDays and MaxArchived, then refreshes the
// archive gauges.
func (s *Service) prune(ctx context.Context, now time.Time) {
	var before int64
	if s.cfg.RetentionDays > 0 {
		before = now.AddDate(0, 0, -s.cfg.RetentionDays).Unix()
	}
	if n, err := s.deps.DB.PruneReportArchive(ctx, before, s.cfg.MaxArchived); err != nil {
		s.log.Error("prune report archive", "err", err)
	} else if n > 0 {
		s.log.Info("report archive pruned", "deleted", n)
	}
	s.updateSize(ctx)
}

func (s *Service) updateSize(ctx context.Context) {
	n, b, err := s.deps.DB.ReportArchiveSize(ctx)
	if err != nil {
		s.log.Error("report archive size", "err", err)
		return
	}
	s.m.archiveCount.Set(float64(n))
	s.m.archiveBytes.Set(float64(b))
}
