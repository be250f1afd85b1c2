package ai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"netmon/app/ai/prompt"
	"netmon/app/errs"
	"netmon/store"
)

func errConversationNotFound(id int64) error {
	return errs.NotFoundf("AI conversation %d not found", id)
}

func conversationOf(c store.AIConversation) Conversation {
	return Conversation{ID: c.ID, ScopeKind: c.ScopeKind, ScopeRef: c.ScopeRef, Site: c.Site, Source: c.Source,
		ProviderID: c.ProviderID, Model: c.Model, Title: c.Title, CreatedBy: c.CreatedBy, CreatedTS: c.CreatedTS,
		UpdatedTS: c.UpdatedTS, ArchivedTS: c.ArchivedTS, ContextSHA256: c.ContextSHA256, ContextBytes: c.ContextBytes,
		Pseudonymised: c.Pseudonymised}
}

func messageOf(m store.AIMessage) Message {
	return Message{ID: m.ID, Role: m.Role, Content: m.Content, TokensIn: m.TokensIn, TokensOut: m.TokensOut,
		Error: m.Error, Partial: m.Partial, CreatedTS: m.CreatedTS}
}

// checkScope validates a scope's kind and ref.
func checkScope(kind, ref string) error {
	if !slices.Contains(ScopeKinds, kind) {
		return errs.InvalidField("scope_kind", "scope_kind: one of fleet, agent, incident, anomaly, device")
	}
	if kind == ScopeFleet {
		if ref != "" {
			return errs.InvalidField("scope_ref", "scope_ref: must be empty for the fleet scope")
		}
		return nil
	}
	if n, err := strconv.ParseInt(ref, 10, 64); err != nil || n < 1 {
		return errs.InvalidField("scope_ref", "scope_ref: the %s's id, a positive integer", kind)
	}
	return nil
}

// scopeSite is the site a conversation on scope is stored with: its
// object's, or the reader's own for a site-bound reader's fleet scope.
func (s *Service) scopeSite(ctx context.Context, scope Scope) (string, error) {
	site := ""
	if s.deps.Facts != nil {
		var err error
		if site, err = s.deps.Facts.Site(ctx, scope); err != nil {
			return "", err
		}
	}
	if site == "" {
		site = scope.Site
	}
	return site, nil
}

// pickProvider returns the provider a conversation uses: id, or the
// default (the first enabled one usable under the lock) when 0.
func (s *Service) pickProvider(ctx context.Context, id int64) (store.AIProvider, error) {
	if id == 0 {
		list, err := s.deps.DB.AIProviders(ctx)
		if err != nil {
			return store.AIProvider{}, err
		}
		for _, p := range list {
			if s.usable(p) == "" {
				return p, nil
			}
		}
		return store.AIProvider{}, errs.Unavailablef(0, "no AI provider is ready: add one under Admin → AI providers")
	}
	p, err := s.deps.DB.AIProvider(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return p, errs.InvalidField("provider_id", "provider_id: AI provider %d not found", id)
	}
	if err != nil {
		return p, err
	}
	if why := s.usable(p); why != "" {
		return p, errs.InvalidField("provider_id", "provider_id: AI provider %q is %s", p.Name, why)
	}
	return p, nil
}

// CreateConversation stores a conversation on in's scope for a reader
// bound to site ("" every site); the scope's object must exist in the
// reader's site. The context is built and sent on the first message.
func (s *Service) CreateConversation(ctx context.Context, who store.AuditActor, site string, in ConversationInput) (int64, error) {
	c, err := s.newConversation(ctx, who, Scope{Kind: in.ScopeKind, Ref: strings.TrimSpace(in.ScopeRef), Site: site}, SourceUser, in.ProviderID, in.Model)
	return c.ID, err
}

func (s *Service) newConversation(ctx context.Context, who store.AuditActor, scope Scope, source string, providerID int64, model string) (store.AIConversation, error) {
	if err := checkScope(scope.Kind, scope.Ref); err != nil {
		return store.AIConversation{}, err
	}
	if len(model) > 200 {
		return store.AIConversation{}, errs.InvalidField("model", "model: at most 200 characters")
	}
	objSite, err := s.scopeSite(ctx, scope)
	if err != nil {
		return store.AIConversation{}, err
	}
	p, err := s.pickProvider(ctx, providerID)
	if err != nil {
		return store.AIConversation{}, err
	}
	if model = strings.TrimSpace(model); model == "" {
		model = p.DefaultModel
	}
	if model == "" {
		return store.AIConversation{}, errs.InvalidField("model", "model: AI provider %q has no default_model; name a model", p.Name)
	}
	now := s.deps.Now().Unix()
	row := store.AIConversation{ScopeKind: scope.Kind, ScopeRef: scope.Ref, Site: objSite, Source: source, ProviderID: p.ID,
		Model: model, CreatedBy: who.Username, CreatedTS: now, UpdatedTS: now, Pseudonymised: p.Pseudonymise || !p.IsLocal, Pseudonyms: "{}"}
	err = s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		var err error
		row.ID, err = tx.InsertAIConversation(ctx, row)
		return err
	})
	if err != nil {
		return row, err
	}
	s.prebuild(ctx, &row)
	return row, nil
}

// ListFilter selects conversations (GET /api/v1/ai/conversations).
type ListFilter struct {
	// Site is the reader's binding ("" every site).
	Site, Scope, Ref, Source string
	Archived                 bool
	Limit                    int
}

// ListConversations lists conversations, most recently updated first.
func (s *Service) ListConversations(ctx context.Context, f ListFilter) ([]Conversation, error) {
	rows, err := s.deps.DB.AIConversations(ctx, store.AIConversationFilter{Site: f.Site, ScopeKind: f.Scope, ScopeRef: f.Ref,
		Source: f.Source, Archived: f.Archived, Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]Conversation, len(rows))
	for i, r := range rows {
		out[i] = conversationOf(r)
	}
	return out, nil
}

func (s *Service) conversation(ctx context.Context, site string, id int64) (store.AIConversation, error) {
	c, err := s.deps.DB.AIConversation(ctx, site, id)
	if errors.Is(err, store.ErrNotFound) {
		return c, errConversationNotFound(id)
	}
	return c, err
}

// pseudonymsOf reads a conversation's token map (a fresh one when it has
// none yet).
func pseudonymsOf(c store.AIConversation) (*prompt.Pseudonyms, error) {
	ps := prompt.New()
	if c.Pseudonyms != "" && c.Pseudonyms != "{}" {
		if err := json.Unmarshal([]byte(c.Pseudonyms), ps); err != nil {
			return nil, fmt.Errorf("conversation %d pseudonyms: %w", c.ID, err)
		}
	}
	return ps, nil
}

// GetConversation returns conversation id of site with its messages and
// token map (for the console to show real names).
func (s *Service) GetConversation(ctx context.Context, site string, id int64) (ConversationDetail, error) {
	c, err := s.conversation(ctx, site, id)
	if err != nil {
		return ConversationDetail{}, err
	}
	rows, err := s.deps.DB.AIMessages(ctx, id)
	if err != nil {
		return ConversationDetail{}, err
	}
	ps, err := pseudonymsOf(c)
	if err != nil {
		return ConversationDetail{}, err
	}
	d := ConversationDetail{Conversation: conversationOf(c), Messages: make([]Message, len(rows)), Pseudonyms: ps.Mappings()}
	for i, m := range rows {
		d.Messages[i] = messageOf(m)
	}
	return d, nil
}

// ArchiveConversation archives conversation id of site (spec: DELETE
// archives; no hard delete). Archived conversations are pruned after the
// retention.
func (s *Service) ArchiveConversation(ctx context.Context, site string, id int64) error {
	err := s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		return tx.ArchiveAIConversation(ctx, site, id, s.deps.Now().Unix())
	})
	if errors.Is(err, store.ErrNotFound) {
		return errConversationNotFound(id)
	}
	return err
}

// buildContext gathers the scope's facts and assembles the context under
// the budget; ps nil sends names as they are (a local provider whose
// admin turned masking off).
func (s *Service) buildContext(ctx context.Context, c store.AIConversation, ps *prompt.Pseudonyms) (prompt.Context, error) {
	var facts []prompt.Fact
	if s.deps.Facts != nil {
		names := ps
		if names == nil {
			names = prompt.New()
		}
		var err error
		facts, err = s.deps.Facts.Facts(ctx, Scope{Kind: c.ScopeKind, Ref: c.ScopeRef, Site: c.Site}, names)
		if err != nil {
			return prompt.Context{}, err
		}
	}
	built, err := prompt.Build(prompt.SystemPrompt, facts, s.cfg.MaxContextKB*1024, ps)
	if err != nil {
		return prompt.Context{}, errs.Invalidf("the context does not fit ai.max_context_kb (%d KiB): %s", s.cfg.MaxContextKB, err.Error())
	}
	return built, nil
}

// Preview is what the next first turn or refresh_context sends: the
// text with tokens, its size and hash, the facts and the token map (real
// values beside the tokens: for the console only). It is built now and
// kept, so the turn that follows sends exactly this.
func (s *Service) Preview(ctx context.Context, site string, id int64) (prompt.Preview, error) {
	c, err := s.conversation(ctx, site, id)
	if err != nil {
		return prompt.Preview{}, err
	}
	built, ok := s.peek(id)
	if !ok {
		s.prebuild(ctx, &c)
		if built, ok = s.peek(id); !ok {
			// The facts failed: build once more for the error.
			var ps *prompt.Pseudonyms
			if c.Pseudonymised {
				if ps, err = pseudonymsOf(c); err != nil {
					return prompt.Preview{}, err
				}
			}
			if built, err = s.buildContext(ctx, c, ps); err != nil {
				return prompt.Preview{}, err
			}
		}
	}
	if built.Preview.Pseudonyms == nil {
		built.Preview.Pseudonyms = []prompt.Mapping{}
	}
	return built.Preview, nil
}

// LatestAnalyses returns the n newest complete answers of site in
// [from, to) (the reports' "last AI analyses").
func (s *Service) LatestAnalyses(ctx context.Context, site string, from, to int64, n int) ([]Analysis, error) {
	rows, err := s.deps.DB.LatestAIAnalyses(ctx, site, from, to, n)
	if err != nil {
		return nil, err
	}
	out := make([]Analysis, 0, len(rows))
	for _, r := range rows {
		c := r.Conversation
		text := r.Message.Content
		if ps, err := pseudonymsOf(c); err == nil {
			text = ps.Reveal(text) // the report stays on the hub's side, like the console
		}
		out = append(out, Analysis{ConversationID: c.ID, Scope: Scope{Kind: c.ScopeKind, Ref: c.ScopeRef, Site: c.Site},
			Source: c.Source, Model: c.Model, Text: text, TokensIn: r.Message.TokensIn, TokensOut: r.Message.TokensOut,
			CreatedTS: r.Message.CreatedTS})
	}
	return out, nil
}
