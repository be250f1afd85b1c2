package reports

import (
	"context"
	"time"

	"netmon/store"
)

// pruneEvery spaces the archive's pruning (a DELETE) between ticks.
const pruneEvery = time.Hour

// runner ticks until ctx ends; the first tick is at once, so a slot
// missed while the hub was down runs at start.
func (s *Service) runner(ctx context.Context) {
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	for {
		s.tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// dueSlot is the slot of sc to run at now, or zero: the latest slot at
// or before now, when it is after the last one claimed and not before
// the schedule was created. Only the latest counts: after downtime the
// missed slots are caught up by one run, not one per slot.
func dueSlot(sc store.ReportSchedule, now time.Time) time.Time {
	if !sc.Enabled {
		return time.Time{}
	}
	sp, err := parseSpec(sc.Spec)
	if err != nil {
		return time.Time{}
	}
	loc, err := time.LoadLocation(sc.Timezone)
	if err != nil {
		return time.Time{}
	}
	slot := sp.prev(now, loc)
	if slot.IsZero() || slot.Unix() <= sc.LastSlot || slot.Unix() < sc.CreatedAt {
		return time.Time{}
	}
	return slot
}

// tick runs every due slot, each claimed in the database first: of two
// hubs (or a hub and its restart) only the one whose claim updated the
// row runs it. A claimed slot is not retried, even when its run fails:
// "never twice" wins over "at least once", and the failure is the
// schedule's last_status.
func (s *Service) tick(ctx context.Context) {
	if s.deps.IsLeader != nil && !s.deps.IsLeader() {
		return
	}
	now := s.deps.Now()
	scheds, err := s.deps.DB.ListReportSchedules(ctx, "")
	if err != nil {
		s.log.Error("list report schedules", "err", err)
		return
	}
	for _, sc := range scheds {
		if ctx.Err() != nil {
			return
		}
		slot := dueSlot(sc, now)
		if slot.IsZero() {
			continue
		}
		ok, err := s.deps.DB.ClaimReportSlot(ctx, sc.ID, slot.Unix(), "running")
		if err != nil {
			s.log.Error("claim report slot", "schedule", sc.ID, "err", err)
			continue
		}
		if !ok {
			s.m.runs.WithLabelValues(outcomeSkipped).Inc()
			continue
		}
		// One run's panic is that run's failure, not the runner's.
		if perr := s.guard.Do(func() {
			rctx, cancel := context.WithTimeout(ctx, s.cfg.RunTimeout)
			defer cancel()
			_, outcome, _ := s.run(rctx, SchedulerActor(), sc, slot)
			s.m.runs.WithLabelValues(outcome).Inc()
		}); perr != nil {
			s.m.runs.WithLabelValues(outcomeFailed).Inc()
			s.setStatus(ctx, sc.ID, "failed: internal error (see the hub log)")
		}
	}
	if now.Sub(s.lastPrune) >= pruneEvery || now.Before(s.lastPrune) {
		s.lastPrune = now
		s.prune(ctx, now)
	}
}
