package reports

import (
	"context"
	"errors"
	"fmt"
	"time"

	"netmon/app/errs"
	"netmon/store"
)

// errScheduleNotFound is the answer for a missing id and for another
// site's id alike.
func errScheduleNotFound(id int64) error { return errs.NotFoundf("report schedule %d not found", id) }

// scheduleOf converts a row, with NextRun computed in its zone.
func (s *Service) scheduleOf(r store.ReportSchedule) Schedule {
	out := Schedule{ID: r.ID, Name: r.Name, Type: r.Type, Days: r.Days, Format: r.Format, Site: r.Site,
		Recipients: r.Recipients, Spec: r.Spec, Timezone: r.Timezone, Enabled: r.Enabled, LastSlot: r.LastSlot,
		LastStatus: r.LastStatus, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy}
	if out.Recipients == nil {
		out.Recipients = []string{}
	}
	sp, err := parseSpec(r.Spec)
	loc, lerr := time.LoadLocation(r.Timezone)
	if err == nil && lerr == nil && r.Enabled {
		after := s.deps.Now()
		if last := time.Unix(r.LastSlot, 0); last.After(after) {
			after = last
		}
		if n := sp.next(after, loc); !n.IsZero() {
			out.NextRun = n.Unix()
		}
	}
	return out
}

// ListSchedules returns the schedules of site ("" every site) by id.
func (s *Service) ListSchedules(ctx context.Context, site string) ([]Schedule, error) {
	rows, err := s.deps.DB.ListReportSchedules(ctx, site)
	if err != nil {
		return nil, err
	}
	out := make([]Schedule, len(rows))
	for i, r := range rows {
		out[i] = s.scheduleOf(r)
	}
	return out, nil
}

// CreateSchedule validates and stores a schedule with its audit record
// report.schedule.create (one transaction). Its first slot is the first
// one at or after now: a slot before its creation is never caught up.
func (s *Service) CreateSchedule(ctx context.Context, who store.AuditActor, in ScheduleInput) (Schedule, error) {
	in.Recipients = append([]string(nil), in.Recipients...)
	in, _, _, err := s.normalizeSchedule(in)
	if err != nil {
		return Schedule{}, err
	}
	if s.cfg.MaxSchedules > 0 {
		all, err := s.deps.DB.ListReportSchedules(ctx, "")
		if err != nil {
			return Schedule{}, err
		}
		if len(all) >= s.cfg.MaxSchedules {
			return Schedule{}, errs.Conflictf("at most %d report schedules: delete one first", s.cfg.MaxSchedules)
		}
	}
	row := store.ReportSchedule{Name: in.Name, Type: in.Type, Days: in.Days, Format: in.Format, Site: in.Site,
		Recipients: in.Recipients, Spec: in.Spec, Timezone: in.Timezone, Enabled: true,
		CreatedAt: s.deps.Now().Unix(), CreatedBy: who.Username}
	err = s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.InsertReportSchedule(ctx, row)
		if err != nil {
			return err
		}
		row.ID = id
		ev := s.deps.Auditor.Event(ctx, who, ActionScheduleCreate, fmt.Sprintf("reports/schedules/%d", id), "ok", "", nil, s.scheduleOf(row))
		_, err = tx.AppendAudit(ctx, ev)
		return err
	})
	if err != nil {
		return Schedule{}, fmt.Errorf("create report schedule: %w", err)
	}
	return s.scheduleOf(row), nil
}

// DeleteSchedule deletes schedule id of site ("" any site) with its
// audit record report.schedule.delete; its archived reports are kept.
func (s *Service) DeleteSchedule(ctx context.Context, who store.AuditActor, site string, id int64) error {
	target := fmt.Sprintf("reports/schedules/%d", id)
	err := s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteReportSchedule(ctx, site, id); err != nil {
			return err
		}
		_, err := tx.AppendAudit(ctx, s.deps.Auditor.Event(ctx, who, ActionScheduleDelete, target, "ok", "", nil, nil))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return errScheduleNotFound(id)
	}
	return err
}

// RunSchedule runs schedule id of site now, outside its slots (which it
// leaves as they are): the report is generated, archived with the audit
// record report.schedule.run, and mailed. The entry's Delivery says how
// the mail went.
func (s *Service) RunSchedule(ctx context.Context, who store.AuditActor, site string, id int64) (ArchiveEntry, error) {
	sc, err := s.deps.DB.GetReportSchedule(ctx, site, id)
	if errors.Is(err, store.ErrNotFound) {
		return ArchiveEntry{}, errScheduleNotFound(id)
	}
	if err != nil {
		return ArchiveEntry{}, err
	}
	entry, _, err := s.run(ctx, who, sc, s.deps.Now())
	return entry, err
}

// run generates schedule sc's report for the range ending at end,
// mails it and records the outcome on the archive entry and the
// schedule.
func (s *Service) run(ctx context.Context, who store.AuditActor, sc store.ReportSchedule, end time.Time) (ArchiveEntry, string, error) {
	req := Request{Type: sc.Type, Days: sc.Days, Format: sc.Format, Site: sc.Site, Now: end}
	g, err := s.generate(ctx, who, req, sc.ID, ActionScheduleRun)
	if err != nil {
		s.log.Error("scheduled report not generated", "schedule", sc.ID, "err", err)
		s.setStatus(ctx, sc.ID, "failed: report not generated (see the hub log)")
		return ArchiveEntry{}, outcomeFailed, err
	}
	entry := g.entry
	outcome := s.deliver(ctx, sc, g.out, &entry, g.loc)
	status := entry.Delivery
	if status == "" {
		status = "archived"
	}
	s.setStatus(ctx, sc.ID, status)
	return entry, outcome, nil
}

func (s *Service) setStatus(ctx context.Context, id int64, status string) {
	if err := s.deps.DB.SetReportScheduleStatus(context.WithoutCancel(ctx), id, status); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log.Error("record report schedule status", "schedule", id, "err", err)
	}
}
