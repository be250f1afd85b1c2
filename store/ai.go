package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The advisory assistant's rows (issue 32, migration 0024): providers
// with their sealed API key, conversations and their messages. A site
// argument of "" means every site; any other value restricts the
// statement to that site's rows, so another site's id answers
// ErrNotFound exactly as a missing one does. Writes take a *Tx so the
// audit record (ai.provider.*, ai.analyze) commits with the change.

// AIProvider is a stored provider. APIKey is the vault's sealed blob
// (associated data: the row's id); empty means no key.
type AIProvider struct {
	ID           int64
	Name         string
	Kind         string
	BaseURL      string
	DefaultModel string
	Enabled      bool
	NoThink      bool
	MaxTokens    int
	Temperature  *float64
	Pseudonymise bool
	IsLocal      bool
	APIKey       []byte
	CreatedTS    int64
	UpdatedTS    int64
}

// AIConversation is a stored conversation. Pseudonyms is the JSON of its
// token map.
type AIConversation struct {
	ID            int64
	ScopeKind     string
	ScopeRef      string
	Site          string
	Source        string
	ProviderID    int64
	Model         string
	Title         string
	CreatedBy     string
	CreatedTS     int64
	UpdatedTS     int64
	ArchivedTS    int64
	ContextSHA256 string
	ContextBytes  int
	Pseudonymised bool
	Pseudonyms    string
}

// AIMessage is a stored message of a conversation.
type AIMessage struct {
	ID             int64
	ConversationID int64
	Role           string
	Content        string
	TokensIn       int
	TokensOut      int
	Error          string
	Partial        bool
	CreatedTS      int64
}

// AIConversationFilter selects conversations: empty fields match all;
// Archived false lists the active ones, true the archived ones.
type AIConversationFilter struct {
	Site      string
	ScopeKind string
	ScopeRef  string
	Source    string
	Archived  bool
	// Limit caps the rows (newest first); 0 is 200.
	Limit int
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

const aiProviderCols = `id, name, kind, base_url, default_model, enabled, no_think, max_tokens, temperature, pseudonymise, is_local, api_key, created_ts, updated_ts`

func scanAIProvider(sc interface{ Scan(...any) error }) (AIProvider, error) {
	var (
		p                                     AIProvider
		enabled, noThink, pseudonymise, local int64
		temp                                  sql.NullFloat64
	)
	if err := sc.Scan(&p.ID, &p.Name, &p.Kind, &p.BaseURL, &p.DefaultModel, &enabled, &noThink, &p.MaxTokens, &temp,
		&pseudonymise, &local, &p.APIKey, &p.CreatedTS, &p.UpdatedTS); err != nil {
		return p, err
	}
	p.Enabled, p.NoThink, p.Pseudonymise, p.IsLocal = enabled != 0, noThink != 0, pseudonymise != 0, local != 0
	if temp.Valid {
		v := temp.Float64
		p.Temperature = &v
	}
	return p, nil
}

func nullTemp(t *float64) sql.NullFloat64 {
	if t == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *t, Valid: true}
}

// InsertAIProvider stores p without its key (the key is sealed with the
// new id and set by SetAIProviderKey in the same transaction) and
// returns the id; ErrConflict when the name is taken.
func (t *Tx) InsertAIProvider(ctx context.Context, p AIProvider) (int64, error) {
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO ai_providers
		(name, kind, base_url, default_model, enabled, no_think, max_tokens, temperature, pseudonymise, is_local, created_ts, updated_ts)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
		p.Name, p.Kind, p.BaseURL, p.DefaultModel, b2i(p.Enabled), b2i(p.NoThink), p.MaxTokens, nullTemp(p.Temperature),
		b2i(p.Pseudonymise), b2i(p.IsLocal), p.CreatedTS, p.UpdatedTS).Scan(&id)
	if isUniqueViolation(err) {
		return 0, fmt.Errorf("insert AI provider %q: %w", p.Name, ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("insert AI provider: %w", err)
	}
	return id, nil
}

// SeedAIProvider stores p only when no provider exists (the bootstrap
// provider of -llm-*, seeded once: an admin who deleted it does not get
// it back at the next start unless the table is empty); id 0 when not.
func (t *Tx) SeedAIProvider(ctx context.Context, p AIProvider) (int64, error) {
	var n int64
	if err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM ai_providers`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count AI providers: %w", err)
	}
	if n > 0 {
		return 0, nil
	}
	return t.InsertAIProvider(ctx, p)
}

// UpdateAIProvider rewrites provider p.ID's fields but its key and
// creation time; ErrNotFound, ErrConflict.
func (t *Tx) UpdateAIProvider(ctx context.Context, p AIProvider) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE ai_providers SET name = $2, kind = $3, base_url = $4, default_model = $5,
		enabled = $6, no_think = $7, max_tokens = $8, temperature = $9, pseudonymise = $10, is_local = $11, updated_ts = $12
		WHERE id = $1`,
		p.ID, p.Name, p.Kind, p.BaseURL, p.DefaultModel, b2i(p.Enabled), b2i(p.NoThink), p.MaxTokens, nullTemp(p.Temperature),
		b2i(p.Pseudonymise), b2i(p.IsLocal), p.UpdatedTS)
	if isUniqueViolation(err) {
		return fmt.Errorf("update AI provider %q: %w", p.Name, ErrConflict)
	}
	return affectedOne(res, err, "update AI provider")
}

// SetAIProviderKey stores provider id's sealed key (empty: none).
func (t *Tx) SetAIProviderKey(ctx context.Context, id int64, sealed []byte) error {
	if sealed == nil {
		sealed = []byte{}
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE ai_providers SET api_key = $2 WHERE id = $1`, id, sealed)
	return affectedOne(res, err, "set AI provider key")
}

// DeleteAIProvider deletes provider id; ErrNotFound.
func (t *Tx) DeleteAIProvider(ctx context.Context, id int64) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM ai_providers WHERE id = $1`, id)
	return affectedOne(res, err, "delete AI provider")
}

// AIProviders returns every provider by id.
func (db *DB) AIProviders(ctx context.Context) ([]AIProvider, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT `+aiProviderCols+` FROM ai_providers ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list AI providers: %w", err)
	}
	defer rows.Close()
	out := []AIProvider{}
	for rows.Next() {
		p, err := scanAIProvider(rows)
		if err != nil {
			return nil, fmt.Errorf("list AI providers: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list AI providers: %w", err)
	}
	return out, nil
}

// AIProvider returns provider id, or ErrNotFound.
func (db *DB) AIProvider(ctx context.Context, id int64) (AIProvider, error) {
	p, err := scanAIProvider(db.reader.QueryRowContext(ctx, `SELECT `+aiProviderCols+` FROM ai_providers WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return AIProvider{}, ErrNotFound
	}
	if err != nil {
		return AIProvider{}, fmt.Errorf("get AI provider %d: %w", id, err)
	}
	return p, nil
}

const aiConversationCols = `id, scope_kind, scope_ref, site, source, provider_id, model, title, created_by, created_ts, updated_ts,
	archived_ts, context_sha256, context_bytes, pseudonymised, pseudonyms`

func scanAIConversation(sc interface{ Scan(...any) error }) (AIConversation, error) {
	var (
		c      AIConversation
		pseudo int64
	)
	err := sc.Scan(&c.ID, &c.ScopeKind, &c.ScopeRef, &c.Site, &c.Source, &c.ProviderID, &c.Model, &c.Title, &c.CreatedBy,
		&c.CreatedTS, &c.UpdatedTS, &c.ArchivedTS, &c.ContextSHA256, &c.ContextBytes, &pseudo, &c.Pseudonyms)
	c.Pseudonymised = pseudo != 0
	return c, err
}

// InsertAIConversation stores c (its ID is ignored) and returns the id.
func (t *Tx) InsertAIConversation(ctx context.Context, c AIConversation) (int64, error) {
	if c.Pseudonyms == "" {
		c.Pseudonyms = "{}"
	}
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO ai_conversations
		(scope_kind, scope_ref, site, source, provider_id, model, title, created_by, created_ts, updated_ts,
		 archived_ts, context_sha256, context_bytes, pseudonymised, pseudonyms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id`,
		c.ScopeKind, c.ScopeRef, c.Site, c.Source, c.ProviderID, c.Model, c.Title, c.CreatedBy, c.CreatedTS, c.UpdatedTS,
		c.ArchivedTS, c.ContextSHA256, c.ContextBytes, b2i(c.Pseudonymised), c.Pseudonyms).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert AI conversation: %w", err)
	}
	return id, nil
}

// UpdateAIConversation records a turn: the title (set once, when empty),
// the last context sent, the token map and the time.
func (t *Tx) UpdateAIConversation(ctx context.Context, c AIConversation) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE ai_conversations SET
		title = CASE WHEN title = '' THEN $2 ELSE title END,
		context_sha256 = $3, context_bytes = $4, pseudonyms = $5, updated_ts = $6 WHERE id = $1`,
		c.ID, c.Title, c.ContextSHA256, c.ContextBytes, c.Pseudonyms, c.UpdatedTS)
	return affectedOne(res, err, "update AI conversation")
}

// ArchiveAIConversation archives conversation id of site at ts (an
// archived one keeps its first archive time); ErrNotFound.
func (t *Tx) ArchiveAIConversation(ctx context.Context, site string, id, ts int64) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE ai_conversations SET archived_ts = CASE WHEN archived_ts = 0 THEN $3 ELSE archived_ts END
		WHERE id = $1 AND ($2 = '' OR site = $2)`, id, site, ts)
	return affectedOne(res, err, "archive AI conversation")
}

// AIConversation returns conversation id of site, or ErrNotFound.
func (db *DB) AIConversation(ctx context.Context, site string, id int64) (AIConversation, error) {
	c, err := scanAIConversation(db.reader.QueryRowContext(ctx, `SELECT `+aiConversationCols+` FROM ai_conversations
		WHERE id = $1 AND ($2 = '' OR site = $2)`, id, site))
	if errors.Is(err, sql.ErrNoRows) {
		return AIConversation{}, ErrNotFound
	}
	if err != nil {
		return AIConversation{}, fmt.Errorf("get AI conversation %d: %w", id, err)
	}
	return c, nil
}

// AIConversations lists conversations by f, most recently updated first.
func (db *DB) AIConversations(ctx context.Context, f AIConversationFilter) ([]AIConversation, error) {
	if f.Limit <= 0 {
		f.Limit = 200
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT `+aiConversationCols+` FROM ai_conversations
		WHERE ($1 = '' OR site = $1) AND ($2 = '' OR scope_kind = $2) AND ($3 = '' OR scope_ref = $3)
		AND ($4 = '' OR source = $4) AND (($5 = 1) = (archived_ts > 0))
		ORDER BY updated_ts DESC, id DESC LIMIT $6`, f.Site, f.ScopeKind, f.ScopeRef, f.Source, b2i(f.Archived), f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list AI conversations: %w", err)
	}
	defer rows.Close()
	out := []AIConversation{}
	for rows.Next() {
		c, err := scanAIConversation(rows)
		if err != nil {
			return nil, fmt.Errorf("list AI conversations: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list AI conversations: %w", err)
	}
	return out, nil
}

// InsertAIMessage stores m (its ID is ignored) and returns the id.
func (t *Tx) InsertAIMessage(ctx context.Context, m AIMessage) (int64, error) {
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO ai_messages
		(conversation_id, role, content, tokens_in, tokens_out, error, partial, created_ts)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		m.ConversationID, m.Role, m.Content, m.TokensIn, m.TokensOut, m.Error, b2i(m.Partial), m.CreatedTS).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert AI message: %w", err)
	}
	return id, nil
}

// AIMessages returns the messages of conversation id in order.
func (db *DB) AIMessages(ctx context.Context, conversationID int64) ([]AIMessage, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, conversation_id, role, content, tokens_in, tokens_out, error, partial, created_ts
		FROM ai_messages WHERE conversation_id = $1 ORDER BY id`, conversationID)
	if err != nil {
		return nil, fmt.Errorf("list AI messages: %w", err)
	}
	defer rows.Close()
	out := []AIMessage{}
	for rows.Next() {
		var (
			m       AIMessage
			partial int64
		)
		if err := rows.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.TokensIn, &m.TokensOut, &m.Error, &partial, &m.CreatedTS); err != nil {
			return nil, fmt.Errorf("list AI messages: %w", err)
		}
		m.Partial = partial != 0
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list AI messages: %w", err)
	}
	return out, nil
}

// AIAnalysis is a finished answer with its conversation (the reports'
// "last AI analyses").
type AIAnalysis struct {
	Conversation AIConversation
	Message      AIMessage
}

// LatestAIAnalyses returns the n newest complete answers (no error, not
// partial) of site's conversations ("" every site) created in [from, to).
func (db *DB) LatestAIAnalyses(ctx context.Context, site string, from, to int64, n int) ([]AIAnalysis, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT m.id, m.role, m.content, m.tokens_in, m.tokens_out, m.created_ts,
		c.id, c.scope_kind, c.scope_ref, c.site, c.source, c.provider_id, c.model, c.title, c.created_by, c.created_ts
		FROM ai_messages m JOIN ai_conversations c ON c.id = m.conversation_id
		WHERE m.role = 'assistant' AND m.error = '' AND m.partial = 0 AND m.created_ts >= $2 AND m.created_ts < $3
		AND ($1 = '' OR c.site = $1)
		ORDER BY m.created_ts DESC, m.id DESC LIMIT $4`, site, from, to, n)
	if err != nil {
		return nil, fmt.Errorf("latest AI analyses: %w", err)
	}
	defer rows.Close()
	out := []AIAnalysis{}
	for rows.Next() {
		var a AIAnalysis
		m, c := &a.Message, &a.Conversation
		if err := rows.Scan(&m.ID, &m.Role, &m.Content, &m.TokensIn, &m.TokensOut, &m.CreatedTS,
			&c.ID, &c.ScopeKind, &c.ScopeRef, &c.Site, &c.Source, &c.ProviderID, &c.Model, &c.Title, &c.CreatedBy, &c.CreatedTS); err != nil {
			return nil, fmt.Errorf("latest AI analyses: %w", err)
		}
		m.ConversationID = c.ID
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest AI analyses: %w", err)
	}
	return out, nil
}

// PruneAIConversations deletes the conversations archived before
// archivedBefore (Unix s) with their messages; it returns how many.
func (db *DB) PruneAIConversations(ctx context.Context, archivedBefore int64) (int64, error) {
	var n int64
	err := db.InTx(ctx, func(t *Tx) error {
		if _, err := t.tx.ExecContext(ctx, `DELETE FROM ai_messages WHERE conversation_id IN
			(SELECT id FROM ai_conversations WHERE archived_ts > 0 AND archived_ts < $1)`, archivedBefore); err != nil {
			return err
		}
		res, err := t.tx.ExecContext(ctx, `DELETE FROM ai_conversations WHERE archived_ts > 0 AND archived_ts < $1`, archivedBefore)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune AI conversations: %w", err)
	}
	return n, nil
}

// HasAIConversation reports whether a conversation of source exists on
// the scope (triage: an incident is assessed once).
func (db *DB) HasAIConversation(ctx context.Context, scopeKind, scopeRef, source string) (bool, error) {
	var n int64
	err := db.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM ai_conversations
		WHERE scope_kind = $1 AND scope_ref = $2 AND source = $3`, scopeKind, scopeRef, source).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("has AI conversation: %w", err)
	}
	return n > 0, nil
}
