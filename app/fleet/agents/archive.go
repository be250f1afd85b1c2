package agents

import (
	"context"
	"fmt"
	"time"

	"netmon/store"
)

// Start launches the archive loop when enabled (Config.Archive and
// ArchiveDays > 0).
func (s *Service) Start() error {
	if !s.cfg.Archive || s.cfg.ArchiveDays <= 0 {
		return nil
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.cfg.ArchiveEvery)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				// A panic in one run is counted; the next one runs.
				_ = s.Panics.Do(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
					defer cancel()
					if _, err := s.ArchiveOnce(ctx); err != nil {
						s.log.Error("agent archive failed", "error", err)
					}
				})
			}
		}
	}()
	return nil
}

// Stop ends the archive loop.
func (s *Service) Stop() error {
	s.stopOnce.Do(func() { close(s.stop) })
	s.wg.Wait()
	return nil
}

// ArchiveOnce deletes the agents offline for ArchiveDays (audited as the
// system) and returns how many.
func (s *Service) ArchiveOnce(ctx context.Context) (int, error) {
	if s.cfg.ArchiveDays <= 0 {
		return 0, nil
	}
	ids, err := s.db.OfflineAgents(ctx, s.cfg.Now().Unix()-int64(s.cfg.ArchiveDays)*86400)
	if err != nil {
		return 0, err
	}
	system := store.AuditActor{Username: "system", ActorType: "system"}
	n := 0
	for _, id := range ids {
		err := s.db.InTx(ctx, func(tx *store.Tx) error {
			a, err := tx.DeleteAgent(ctx, id)
			if err != nil {
				return err
			}
			_, err = tx.AppendAudit(ctx, s.auditor.Event(ctx, system, ActionAgentDelete, agentTarget(a), ResultOK,
				fmt.Sprintf("archived: offline more than %d days", s.cfg.ArchiveDays), s.itemOfAgent(a), nil))
			return err
		})
		if err != nil {
			return n, fmt.Errorf("archive agent %d: %w", id, err)
		}
		s.roster.Forget(id)
		n++
		s.m.archived.Inc()
	}
	if n > 0 {
		s.log.Info("offline agents archived", "count", n, "days", s.cfg.ArchiveDays)
	}
	return n, nil
}
