// Package ai owns the advisory assistant (spec 1 capability 9, 2.8, 4.5,
// 6.2, issue 32): the providers (rows with their API key sealed by the
// vault, the egress lock), the conversations and their messages, the
// presets, the context sent on a conversation's first turn, and the
// streamed answers. It is advisory only: the model gets text and gives
// text; nothing it answers is executed or changes any state.
//
// The wire formats live in app/ai/provider, the prompt (pseudonyms,
// quoting of untrusted values, the budget) in app/ai/prompt, the facts of
// a scope in app/ai/facts, triage and the nightly summary in
// app/ai/triage.
package ai

import (
	"context"
	"encoding/json"

	"netmon/app/ai/prompt"
	"netmon/store"
)

// Scope kinds of a conversation (spec 2.8).
const (
	ScopeFleet    = "fleet"    // every agent and device of the caller's sites; ref ""
	ScopeAgent    = "agent"    // ref: agent id
	ScopeIncident = "incident" // ref: incident id
	ScopeAnomaly  = "anomaly"  // ref: alert event id (any kind: anomaly, ioc, bw, …)
	ScopeDevice   = "device"   // ref: device id
)

// ScopeKinds lists the scope kinds in the spec's order.
var ScopeKinds = []string{ScopeFleet, ScopeAgent, ScopeIncident, ScopeAnomaly, ScopeDevice}

// Sources of a conversation: who started it.
const (
	SourceUser    = "user"    // an operator, through the API
	SourceTriage  = "triage"  // the triage of a new incident or alert
	SourceNightly = "nightly" // the daily/weekly summary
)

// Scope is what a conversation is about, and where its reader stands.
type Scope struct {
	// Kind is one of ScopeKinds; Ref its object's id ("" for fleet).
	Kind string
	Ref  string
	// Site is the caller's site binding: "" reads every site; any other
	// value restricts every fact to that site, and an object of another
	// site is not found (errs.NotFound), exactly like a missing one.
	Site string
}

// FactSource builds the facts of a scope from netmon's own data
// (*facts.Builder). It registers the host and user names it reads in ps
// (ps.AddHost, ps.AddUser) so the free text around them is
// pseudonymised too; ps is never nil. A scope whose object does not
// exist, or is of another site, answers errs.NotFound.
type FactSource interface {
	Facts(ctx context.Context, scope Scope, ps *prompt.Pseudonyms) ([]prompt.Fact, error)
	// Site is the site of the scope's object ("" for fleet and for an
	// object without one): the conversation is stored with it, so a
	// site-bound reader finds only its site's conversations.
	Site(ctx context.Context, scope Scope) (string, error)
}

// Provider is a provider as the API lists it (spec 2.8): never the key.
type Provider struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Kind         string `json:"kind" jsonschema:"enum=cloud-a,enum=cloud-b,enum=local-a,enum=local-b,enum=compat"`
	BaseURL      string `json:"base_url"`
	DefaultModel string `json:"default_model"`
	Enabled      bool   `json:"enabled"`
	HasKey       bool   `json:"has_key"`
	// IsLocal is computed from the addresses the base URL resolves to
	// at registration: all loopback, RFC 1918, CGNAT-free private or ULA.
	IsLocal     bool     `json:"is_local"`
	NoThink     bool     `json:"no_think"`
	MaxTokens   int      `json:"max_tokens"`
	Temperature *float64 `json:"temperature,omitempty"`
	// Pseudonymise is on by default; an admin may turn it off only for
	// an is_local provider.
	Pseudonymise bool  `json:"pseudonymise"`
	CreatedTS    int64 `json:"created_ts"`
	UpdatedTS    int64 `json:"updated_ts"`
}

// ProviderInput is the provider write body (POST, PUT).
type ProviderInput struct {
	Name         string   `json:"name" jsonschema_description:"1-100 characters, unique"`
	Kind         string   `json:"kind" jsonschema:"enum=cloud-a,enum=cloud-b,enum=local-a,enum=local-b,enum=compat" jsonschema_description:"cloud-a: OpenAI Chat Completions; cloud-b: Anthropic Messages; local-a: Ollama /api/chat; local-b: llama.cpp server /completion; compat: any OpenAI-compatible server"`
	BaseURL      string   `json:"base_url" jsonschema_description:"the server's root, http(s)://host[:port][/path]; no user info, query or fragment"`
	APIKey       string   `json:"api_key" jsonschema_description:"sealed in the vault, never returned (has_key); empty on update keeps the stored key"`
	DefaultModel string   `json:"default_model" jsonschema_description:"model used when a conversation names none"`
	Enabled      *bool    `json:"enabled,omitempty" jsonschema_description:"default true"`
	NoThink      bool     `json:"no_think" jsonschema_description:"ask the model not to reason where the kind has a switch; reasoning is stripped either way"`
	MaxTokens    int      `json:"max_tokens" jsonschema_description:"cap of an answer, 0-32768 (0: the provider's default; cloud-b 1024)"`
	Temperature  *float64 `json:"temperature,omitempty" jsonschema_description:"0-2; absent: the provider’s default"`
	Pseudonymise *bool    `json:"pseudonymise,omitempty" jsonschema_description:"default true; false is accepted only for an is_local provider"`
}

// ProviderTest is the answer of POST /api/v1/ai/providers/{id}/test.
type ProviderTest struct {
	OK        bool     `json:"ok"`
	LatencyMS float64  `json:"latency_ms,omitempty" jsonschema_description:"time to list the models, in milliseconds (two decimals)"`
	Models    []string `json:"models,omitempty"`
	// Error says what failed (class and status), never the remote body.
	Error string `json:"error,omitempty"`
}

// Status is GET /api/v1/ai/status (spec 2.8); {enabled:false} when off.
type Status struct {
	Enabled          bool       `json:"enabled"`
	Providers        []Provider `json:"providers,omitempty"`
	DefaultProvider  int64      `json:"default_provider,omitempty"`
	DefaultModel     string     `json:"default_model,omitempty"`
	HasReadyProvider bool       `json:"has_ready_provider"`
	AllowCloud       bool       `json:"allow_cloud"`
	MaxContextKB     int        `json:"max_context_kb,omitempty"`
}

// MarshalJSON writes {"enabled":false} and nothing else when off (spec
// 2.8, 4.5).
func (s Status) MarshalJSON() ([]byte, error) {
	if !s.Enabled {
		return []byte(`{"enabled":false}`), nil
	}
	type plain Status
	return json.Marshal(plain(s))
}

// Preset is a server-defined task (spec 2.8).
type Preset struct {
	ID     string   `json:"id"`
	Label  string   `json:"label"`
	Scopes []string `json:"scopes"`
	Task   string   `json:"task"`
}

// ConversationInput is the body of POST /api/v1/ai/conversations.
type ConversationInput struct {
	ScopeKind  string `json:"scope_kind" jsonschema:"enum=fleet,enum=agent,enum=incident,enum=anomaly,enum=device"`
	ScopeRef   string `json:"scope_ref" jsonschema_description:"the agent, incident, alert event or device id; empty for fleet"`
	ProviderID int64  `json:"provider_id" jsonschema_description:"0: the default provider (the first enabled one)"`
	Model      string `json:"model" jsonschema_description:"empty: the provider's default_model"`
}

// Conversation is a stored conversation.
type Conversation struct {
	ID         int64  `json:"id"`
	ScopeKind  string `json:"scope_kind" jsonschema:"enum=fleet,enum=agent,enum=incident,enum=anomaly,enum=device"`
	ScopeRef   string `json:"scope_ref"`
	Site       string `json:"site"`
	Source     string `json:"source" jsonschema:"enum=user,enum=triage,enum=nightly"`
	ProviderID int64  `json:"provider_id"`
	Model      string `json:"model"`
	Title      string `json:"title"`
	CreatedBy  string `json:"created_by"`
	CreatedTS  int64  `json:"created_ts"`
	UpdatedTS  int64  `json:"updated_ts"`
	// ArchivedTS is when DELETE archived it (0: active); archived
	// conversations are pruned 90 days later.
	ArchivedTS int64 `json:"archived_ts"`
	// ContextSHA256 and ContextBytes describe the last context sent.
	ContextSHA256 string `json:"context_sha256"`
	ContextBytes  int    `json:"context_bytes"`
	// Pseudonymised says whether names and addresses left the hub as tokens.
	Pseudonymised bool `json:"pseudonymised"`
}

// Roles of a stored message. "context" is the facts message netmon sent
// (shown in the console as "what was sent"); the spec's user and
// assistant turns are the others.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleContext   = "context"
)

// Message is a stored message (spec 2.8). Content is as it was sent or
// received: with pseudonym tokens; ConversationDetail.Pseudonyms maps them
// back in the console.
type Message struct {
	ID        int64  `json:"id"`
	Role      string `json:"role" jsonschema:"enum=user,enum=assistant,enum=context"`
	Content   string `json:"content"`
	TokensIn  int    `json:"tokens_in"`
	TokensOut int    `json:"tokens_out"`
	Error     string `json:"error"`
	// Partial marks an answer cut short (the client went away, the
	// provider failed mid-stream): Content is what had arrived.
	Partial   bool  `json:"partial"`
	CreatedTS int64 `json:"created_ts"`
}

// ConversationDetail is GET /api/v1/ai/conversations/{id}.
type ConversationDetail struct {
	Conversation Conversation `json:"conversation"`
	Messages     []Message    `json:"messages"`
	// Pseudonyms maps each token of the conversation to its real value,
	// for the console to show real names; never sent to a provider.
	Pseudonyms []prompt.Mapping `json:"pseudonyms"`
}

// MessageInput is the body of POST /api/v1/ai/conversations/{id}/messages.
type MessageInput struct {
	Content        string `json:"content" jsonschema_description:"the question, at most 8000 characters; may be empty when preset is set"`
	Preset         string `json:"preset" jsonschema_description:"a preset id (GET /api/v1/ai/presets): its task is asked, with content appended"`
	RefreshContext bool   `json:"refresh_context" jsonschema_description:"rebuild the scope's facts and send them again before this turn"`
}

// Event is one server-sent event of an answer (spec 6.2): exactly one of
// a delta, the end, or an error.
type Event struct {
	Delta     string `json:"delta,omitempty"`
	Done      bool   `json:"done,omitempty"`
	TokensIn  int    `json:"tokens_in,omitempty"`
	TokensOut int    `json:"tokens_out,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Analysis is a finished one-shot answer (triage, nightly, reports).
type Analysis struct {
	ConversationID int64
	Scope          Scope
	Source         string
	Provider       string
	Model          string
	Text           string
	TokensIn       int
	TokensOut      int
	CreatedTS      int64
}

// Analyst runs one-shot analyses (*Service): triage and the nightly
// summary use it. Analyze stores a conversation of source with the
// scope's context, asks task, stores the answer and audits the exchange
// (ai.analyze by who); it fails with errs.Unavailable when no provider is
// ready.
type Analyst interface {
	Analyze(ctx context.Context, who store.AuditActor, scope Scope, source, task string) (Analysis, error)
}
