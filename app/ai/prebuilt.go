package ai

import (
	"context"
	"encoding/json"
	"time"

	"netmon/app/ai/prompt"
	"netmon/store"
)

// A conversation's context is built when the conversation is created
// (and again at a preview), kept in memory, and sent on the first turn
// when it is younger than contextFresh: the first answer then starts
// without waiting for the facts (on a 1 000-agent fleet, reading the
// last hour of telemetry takes about 100 ms), and what the preview
// showed is exactly what is sent. Older, evicted, or on another replica,
// the first turn builds it again with the conversation's own pseudonyms.
const (
	contextFresh = 10 * time.Minute
	maxPrebuilt  = 256
)

type builtContext struct {
	at  time.Time
	ctx prompt.Context
}

// prebuild builds c's context now, stores the pseudonyms it gave out
// (so a rebuild keeps the same tokens) and keeps it for the first turn.
// A failure is left to the first turn, which builds again and reports it.
func (s *Service) prebuild(ctx context.Context, c *store.AIConversation) {
	if s.deps.Facts == nil {
		return
	}
	var ps *prompt.Pseudonyms
	if c.Pseudonymised {
		var err error
		if ps, err = pseudonymsOf(*c); err != nil {
			return
		}
	}
	built, err := s.buildContext(ctx, *c, ps)
	if err != nil {
		s.log.Debug("prebuild AI context", "conversation", c.ID, "err", err)
		return
	}
	if ps != nil {
		b, err := json.Marshal(ps)
		if err != nil {
			return
		}
		c.Pseudonyms = string(b)
		if err := s.deps.DB.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateAIConversation(ctx, *c) }); err != nil {
			return
		}
	}
	s.keep(c.ID, built)
}

func (s *Service) keep(id int64, built prompt.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.built) >= maxPrebuilt {
		var oldest int64
		var at time.Time
		for k, v := range s.built {
			if oldest == 0 || v.at.Before(at) {
				oldest, at = k, v.at
			}
		}
		delete(s.built, oldest)
	}
	s.built[id] = builtContext{at: time.Now(), ctx: built}
}

// take returns (and forgets) a fresh prebuilt context of conversation id.
func (s *Service) take(id int64) (prompt.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.built[id]
	delete(s.built, id)
	return b.ctx, ok && time.Since(b.at) < contextFresh
}

// peek returns a fresh prebuilt context of conversation id, kept.
func (s *Service) peek(id int64) (prompt.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.built[id]
	return b.ctx, ok && time.Since(b.at) < contextFresh
}
