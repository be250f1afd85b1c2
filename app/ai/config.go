package ai

import "time"

// Config configures the assistant (spec 1: -ai, -ai-allow-cloud,
// -llm-*; the YAML block ai, env NETMON_AI__*).
type Config struct {
	// Enabled is -ai: off, every /api/v1/ai route but status answers 404
	// and status answers {enabled:false}.
	Enabled bool
	// AllowCloud is -ai-allow-cloud: false accepts only providers whose
	// every address is loopback, RFC 1918 or ULA, at registration and at
	// every connection (after DNS resolution, redirects included).
	AllowCloud bool
	// MaxContextKB bounds the context sent on a turn (system prompt and
	// facts), in KiB.
	MaxContextKB int
	// LLMBaseURL, LLMAPIKey, LLMModel and LLMKind describe the bootstrap
	// provider (-llm-base-url, -llm-api-key, -llm-model), seeded once
	// when the provider table is empty; LLMKind is its kind (default
	// compat, an OpenAI-compatible server).
	LLMBaseURL string
	LLMAPIKey  string
	LLMModel   string
	LLMKind    string
	// ConversationRetention: archived conversations are deleted this
	// long after they were archived (spec 8: 90 days).
	ConversationRetention time.Duration
	// PruneInterval is how often the pruning runs.
	PruneInterval time.Duration
	// MaxStreams bounds the answers streaming at once on this hub; one
	// more is refused with 503 and Retry-After.
	MaxStreams int
	// MaxTurns bounds the messages of one conversation.
	MaxTurns int
	// FirstByteTimeout bounds the wait for a provider's first byte (a
	// local engine may load its model first); IdleTimeout the silence
	// inside a stream; CallTimeout a whole answer.
	FirstByteTimeout time.Duration
	IdleTimeout      time.Duration
	CallTimeout      time.Duration
	// Nightly and Triage are the blocks ai.nightly and ai.triage.
	Nightly NightlyConfig `config:"nested"`
	Triage  TriageConfig  `config:"nested"`
}

// NightlyConfig is the daily/weekly summary (YAML ai.nightly).
type NightlyConfig struct {
	// Enabled writes the summary on Spec (leader-gated).
	Enabled bool
	// Spec is daily:HH:MM, weekly:<mon..sun>:HH:MM or interval:<minutes>
	// (the hub's report time zone).
	Spec string
	// Recipients get the summary through the alert e-mail channel.
	Recipients []string
}

// TriageConfig is the assessment of new incidents and alerts (YAML
// ai.triage).
type TriageConfig struct {
	// Enabled assesses new incidents and alerts at or above MinSeverity
	// (leader-gated).
	Enabled bool
	// MinSeverity: alerts and incidents below it are not assessed.
	MinSeverity int
	// MaxPerHour caps the assessments; beyond it they are dropped and
	// counted (netmon_ai_triage_dropped_total).
	MaxPerHour int
}

// DefaultConfig: off; cloud providers allowed (the spec's default); 24
// KiB of context; archived conversations kept 90 days; 64 streams.
func DefaultConfig() Config {
	return Config{
		AllowCloud:            true,
		MaxContextKB:          24,
		LLMKind:               "compat",
		ConversationRetention: 90 * 24 * time.Hour,
		PruneInterval:         time.Hour,
		MaxStreams:            64,
		MaxTurns:              200,
		FirstByteTimeout:      60 * time.Second,
		IdleTimeout:           30 * time.Second,
		CallTimeout:           5 * time.Minute,
		Nightly:               NightlyConfig{Spec: "daily:07:00", Recipients: []string{}},
		Triage:                TriageConfig{MinSeverity: 7, MaxPerHour: 10},
	}
}
