package ai

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"netmon/app/ai/prompt"
	"netmon/app/ai/provider"
	"netmon/app/errs"
	"netmon/store"
)

// MaxQuestionChars bounds a question's text.
const MaxQuestionChars = 8000

// Turn is a message accepted and stored, whose answer is streamed by
// Stream. Begin does every check and write that can fail with a status
// code; after it the answer's failures are SSE error events.
type Turn struct {
	s       *Service
	who     store.AuditActor
	conv    store.AIConversation
	prov    store.AIProvider
	client  provider.Client
	req     provider.Request
	reqSHA  string
	started time.Time
	release func()
}

// Begin checks and stores a user message of conversation id (site: the
// reader's binding) and prepares the provider call: the scope's context
// on the first turn and on refresh_context, the history, the question
// pseudonymised. It takes one of the MaxStreams slots (503 when none is
// free) until Stream ends; call Stream or Abandon.
func (s *Service) Begin(ctx context.Context, who store.AuditActor, site string, id int64, in MessageInput) (*Turn, error) {
	started := time.Now()
	in.Content = strings.TrimSpace(in.Content)
	if utf8.RuneCountInString(in.Content) > MaxQuestionChars {
		return nil, errs.InvalidField("content", "content: at most %d characters", MaxQuestionChars)
	}
	c, err := s.conversation(ctx, site, id)
	if err != nil {
		return nil, err
	}
	if c.ArchivedTS > 0 {
		return nil, errs.Conflictf("AI conversation %d is archived", id)
	}
	question := in.Content
	if in.Preset != "" {
		p, ok := presetByID(in.Preset)
		if !ok {
			return nil, errs.InvalidField("preset", "preset: unknown preset %q (GET /api/v1/ai/presets)", in.Preset)
		}
		if !slices.Contains(p.Scopes, c.ScopeKind) {
			return nil, errs.InvalidField("preset", "preset: %q does not apply to the %s scope", in.Preset, c.ScopeKind)
		}
		question = strings.TrimSpace(p.Task + "\n\n" + in.Content)
	}
	if question == "" {
		return nil, errs.InvalidField("content", "content: a question or a preset is needed")
	}
	select {
	case s.streams <- struct{}{}:
	default:
		return nil, errs.Unavailablef(5*time.Second, "too many AI answers streaming on this hub (%d); retry shortly", s.cfg.MaxStreams)
	}
	t := &Turn{s: s, who: who, conv: c, started: started, release: func() { <-s.streams }}
	if err := t.prepare(ctx, question, in.RefreshContext); err != nil {
		t.release()
		return nil, err
	}
	s.m.streaming.Inc()
	return t, nil
}

func (t *Turn) prepare(ctx context.Context, question string, refresh bool) error {
	s, c := t.s, &t.conv
	p, err := s.deps.DB.AIProvider(ctx, c.ProviderID)
	if errors.Is(err, store.ErrNotFound) {
		return errs.Conflictf("the provider of AI conversation %d was deleted; start a new conversation", c.ID)
	}
	if err != nil {
		return err
	}
	if why := s.usable(p); why != "" {
		return errs.Unavailablef(0, "AI provider %q is %s", p.Name, why)
	}
	t.prov = p
	if t.client, err = s.client(p); err != nil {
		return err
	}
	history, err := s.deps.DB.AIMessages(ctx, c.ID)
	if err != nil {
		return err
	}
	if len(history)+3 > s.cfg.MaxTurns {
		return errs.Conflictf("AI conversation %d is full (%d messages); start a new one", c.ID, s.cfg.MaxTurns)
	}
	var ps *prompt.Pseudonyms
	if c.Pseudonymised {
		if ps, err = pseudonymsOf(*c); err != nil {
			return err
		}
	}
	hasContext := false
	for _, m := range history {
		hasContext = hasContext || m.Role == RoleContext
	}
	now := s.deps.Now().Unix()
	var fresh []store.AIMessage
	if !hasContext || refresh {
		built, ready := s.take(c.ID)
		if !ready || refresh {
			if built, err = s.buildContext(ctx, *c, ps); err != nil {
				return err
			}
		}
		c.ContextSHA256, c.ContextBytes = built.SHA256, len(built.Bytes)
		fresh = append(fresh, store.AIMessage{ConversationID: c.ID, Role: RoleContext, Content: built.Messages[0].Content, CreatedTS: now})
	}
	sent := question
	if ps != nil {
		sent = ps.Pseudonymise(question) // an operator's own question may name hosts and addresses too
	}
	fresh = append(fresh, store.AIMessage{ConversationID: c.ID, Role: RoleUser, Content: sent, CreatedTS: now})
	if c.Title == "" {
		c.Title = title(question)
	}
	c.UpdatedTS = now
	if ps != nil {
		b, err := json.Marshal(ps)
		if err != nil {
			return fmt.Errorf("conversation %d pseudonyms: %w", c.ID, err)
		}
		c.Pseudonyms = string(b)
	}
	if err := s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		for _, m := range fresh {
			if _, err := tx.InsertAIMessage(ctx, m); err != nil {
				return err
			}
		}
		return tx.UpdateAIConversation(ctx, *c)
	}); err != nil {
		return err
	}
	t.req = provider.Request{Model: c.Model, System: prompt.SystemPrompt, Messages: turns(append(history, fresh...)),
		MaxTokens: p.MaxTokens, NoThink: p.NoThink, Temperature: p.Temperature}
	t.reqSHA = requestSHA(t.req)
	return nil
}

// title is a conversation's title: the question's first line, cut.
func title(q string) string {
	q, _, _ = strings.Cut(q, "\n")
	if r := []rune(q); len(r) > 80 {
		q = string(r[:79]) + "…"
	}
	return q
}

// turns makes the provider's messages from the stored ones: the context
// is a user turn, failed answers are left out, and consecutive turns of
// one role are joined (Anthropic-style APIs require alternation).
func turns(ms []store.AIMessage) []provider.Message {
	var out []provider.Message
	for _, m := range ms {
		role := m.Role
		switch {
		case role == RoleContext:
			role = RoleUser
		case role == RoleAssistant && (m.Content == "" || (m.Error != "" && !m.Partial)):
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content += "\n\n" + m.Content
			continue
		}
		out = append(out, provider.Message{Role: role, Content: m.Content})
	}
	return out
}

// requestSHA is the SHA-256 of exactly the text sent: the system prompt
// and each turn, as "role: content" blocks.
func requestSHA(r provider.Request) string {
	h := sha256.New()
	h.Write([]byte(r.System))
	for _, m := range r.Messages {
		h.Write([]byte("\n\n" + m.Role + ": " + m.Content))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Abandon gives the slot back when Stream will not run.
func (t *Turn) Abandon() {
	t.s.m.streaming.Dec()
	t.release()
}

// ConversationID is the conversation the turn belongs to.
func (t *Turn) ConversationID() int64 { return t.conv.ID }

// Stream calls the provider and sends the answer to emit as it comes:
// deltas, then {done, tokens_in, tokens_out} or {error}. ctx ending (the
// client went away) or emit failing closes the provider's call at once;
// what had arrived is stored as a partial answer either way. The answer
// and its ai.analyze audit record commit together. It returns the
// answer as stored.
func (t *Turn) Stream(ctx context.Context, emit func(Event) error) Message {
	defer t.Abandon()
	s := t.s
	var (
		text      strings.Builder
		in, out   int
		errText   string
		partial   bool
		firstSent bool
	)
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := t.client.Chat(callCtx, t.req)
	if err == nil {
		for {
			ev, err2 := st.Next()
			if err2 != nil {
				err = err2
				break
			}
			if ev.Done {
				in, out = ev.TokensIn, ev.TokensOut
				break
			}
			if ev.Delta == "" {
				continue
			}
			text.WriteString(ev.Delta)
			if !firstSent {
				firstSent = true
				s.m.firstDelta.Observe(time.Since(t.started).Seconds())
			}
			if emit(Event{Delta: ev.Delta}) != nil {
				err = context.Canceled
				break
			}
		}
		_ = st.Close()
	}
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled) || provider.ClassOf(err) == provider.Canceled):
		errText, partial = "cancelled: the client went away before the end of the answer", true
	case err != nil:
		errText, partial = err.Error(), text.Len() > 0
	case t.prov.MaxTokens > 0 && out >= t.prov.MaxTokens:
		errText, partial = fmt.Sprintf("the answer reached this provider's max_tokens (%d) and was cut; raise max_tokens or ask for a shorter answer", t.prov.MaxTokens), true
	}
	msg := t.finish(text.String(), in, out, errText, partial)
	if errText != "" {
		_ = emit(Event{Error: errText})
	} else {
		_ = emit(Event{Done: true, TokensIn: in, TokensOut: out})
	}
	return msg
}

// finish stores the answer and its audit record in one transaction, on
// a context of its own: a client that went away must not lose either.
func (t *Turn) finish(text string, in, out int, errText string, partial bool) Message {
	s := t.s
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	result := "ok"
	switch {
	case partial:
		result = "partial"
	case errText != "":
		result = "error"
	}
	s.m.answers.WithLabelValues(result).Inc()
	s.m.tokens.WithLabelValues("in").Add(float64(in))
	s.m.tokens.WithLabelValues("out").Add(float64(out))
	m := store.AIMessage{ConversationID: t.conv.ID, Role: RoleAssistant, Content: text, TokensIn: in, TokensOut: out,
		Error: errText, Partial: partial, CreatedTS: s.deps.Now().Unix()}
	detail, _ := json.Marshal(map[string]any{
		"scope": t.conv.ScopeKind, "scope_ref": t.conv.ScopeRef, "site": t.conv.Site, "source": t.conv.Source,
		"provider_id": t.prov.ID, "provider": t.prov.Name, "kind": t.prov.Kind, "model": t.req.Model,
		"tokens_in": in, "tokens_out": out, "context_sha256": t.conv.ContextSHA256, "request_sha256": t.reqSHA,
		"pseudonymised": t.conv.Pseudonymised, "error": errText,
	})
	err := s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.InsertAIMessage(ctx, m)
		if err != nil {
			return err
		}
		m.ID = id
		t.conv.UpdatedTS = m.CreatedTS
		if err := tx.UpdateAIConversation(ctx, t.conv); err != nil {
			return err
		}
		_, err = tx.AppendAudit(ctx, s.deps.Auditor.Event(ctx, t.who, ActionAnalyze, "ai/conversations/"+strconv.FormatInt(t.conv.ID, 10), result, string(detail), nil, nil))
		return err
	})
	if err != nil {
		s.log.Error("store AI answer", "conversation", t.conv.ID, "err", err)
	}
	return messageOf(m)
}

// Analyze runs a one-shot analysis (triage, the nightly summary): a new
// conversation of source on scope with the default provider, the task
// asked, the answer stored and audited as any other.
func (s *Service) Analyze(ctx context.Context, who store.AuditActor, scope Scope, source, task string) (Analysis, error) {
	if !s.Enabled() {
		return Analysis{}, errs.Unavailablef(0, "the AI assistant is off (-ai)")
	}
	c, err := s.newConversation(ctx, who, scope, source, 0, "")
	if err != nil {
		return Analysis{}, err
	}
	t, err := s.Begin(ctx, who, "", c.ID, MessageInput{Content: task})
	if err != nil {
		return Analysis{}, err
	}
	msg := t.Stream(ctx, func(Event) error { return nil })
	a := Analysis{ConversationID: c.ID, Scope: Scope{Kind: c.ScopeKind, Ref: c.ScopeRef, Site: c.Site}, Source: source,
		Provider: t.prov.Name, Model: c.Model, Text: msg.Content, TokensIn: msg.TokensIn, TokensOut: msg.TokensOut, CreatedTS: msg.CreatedTS}
	if ps, err := pseudonymsOf(t.conv); err == nil {
		a.Text = ps.Reveal(a.Text)
	}
	if msg.Error != "" {
		return a, errs.Unavailablef(0, "AI analysis: %s", msg.Error)
	}
	return a, nil
}
