package api

import (
	"net/http"

	"netmon/app/api/router"
)

// aiOff is said of every assistant route but status.
const aiOff = " With the assistant off (-ai not set) this route answers 404."

// aiRoutes are the assistant's routes (spec 4.5, 6.2; issue 32), in ai.go.
func (s *Server) aiRoutes() []router.Route {
	return []router.Route{
		{Method: http.MethodGet, Path: "/api/v1/ai/status", OperationID: "aiStatus", Tag: "ai", Perm: router.Session,
			Summary:     "Whether the assistant is on, its providers, the default one and whether any can answer",
			Description: "Off (-ai not set): {\"enabled\":false} and nothing else. On: the providers (never a key: has_key), default_provider and default_model (the first enabled provider usable under the egress lock), has_ready_provider, allow_cloud (-ai-allow-cloud) and max_context_kb.",
			Do:          router.JSON(s.aiStatus)},
		{Method: http.MethodGet, Path: "/api/v1/ai/presets", OperationID: "aiPresets", Tag: "ai", Perm: router.Session,
			Summary: "The server-defined tasks, each with the scopes it applies to." + aiOff, Do: router.JSON(s.aiPresets),
			Errors: map[int]string{404: "the assistant is off"}},
		{Method: http.MethodGet, Path: "/api/v1/ai/conversations", OperationID: "aiListConversations", Tag: "ai", Perm: router.Analyze,
			Summary:     "Conversations, most recently updated first (a site-bound caller: its site's)",
			Description: "source tells who started one: user (an operator), triage (the assessment of a new incident or alert, ai.triage) or nightly (the daily/weekly summary, ai.nightly). Archived conversations are listed with archived=true and deleted 90 days after they were archived." + aiOff,
			Do:          router.JSON(s.aiListConversations), Errors: map[int]string{404: "the assistant is off"}},
		{Method: http.MethodPost, Path: "/api/v1/ai/conversations", OperationID: "aiCreateConversation", Tag: "ai", Perm: router.Analyze,
			Summary:     "Start a conversation on a scope: fleet, agent, incident, anomaly (an alert event) or device",
			Description: "The scope's object must exist in the caller's site (another site's is 404 like a missing one). provider_id 0 takes the default provider. Nothing is sent to the provider until the first message, which carries the scope's facts (see the context route)." + aiOff,
			Do:          router.JSON(s.aiCreateConversation),
			Errors:      map[int]string{404: "the assistant is off, or no such scope object in the caller's site", 503: "no provider is ready"}},
		{Method: http.MethodGet, Path: "/api/v1/ai/conversations/{id}", OperationID: "aiGetConversation", Tag: "ai", Perm: router.Analyze,
			Summary:     "A conversation with its messages and its pseudonym map",
			Description: "Messages hold the text as it was sent and received, with tokens (ip-1, ip6-1, mac-1, host-1, user-1, tok-1) in place of addresses and names; pseudonyms maps each token back to its value, for the console to show real names. The map never leaves the hub but to this route. role context is the facts message netmon sent; partial marks an answer cut short (client gone, provider failure, token limit)." + aiOff,
			Do:          router.JSON(s.aiGetConversation), Errors: map[int]string{404: "no such conversation (or another site's)"}},
		{Method: http.MethodDelete, Path: "/api/v1/ai/conversations/{id}", OperationID: "aiArchiveConversation", Tag: "ai", Perm: router.Analyze,
			Summary: "Archive a conversation (no hard delete; pruned 90 days later)." + aiOff, Do: router.JSON(s.aiArchiveConversation),
			Errors: map[int]string{404: "no such conversation (or another site's)"}},
		{Method: http.MethodGet, Path: "/api/v1/ai/conversations/{id}/context", OperationID: "aiPreviewContext", Tag: "ai", Perm: router.Analyze,
			Summary:     "What will be sent: the context the next first turn or refresh_context sends",
			Description: "text is exactly the facts message as it would leave the hub (tokens in place of addresses and names, untrusted values quoted as JSON strings between the data fences), bytes and sha256 its size and hash (the ai.analyze audit record carries the hash of what was sent), facts each fact with its source tag, omitted how many facts did not fit ai.max_context_kb, and pseudonyms the token map (real values: for the console only)." + aiOff,
			Do:          router.JSON(s.aiPreview), Errors: map[int]string{404: "no such conversation (or another site's)"}},
		{Method: http.MethodPost, Path: "/api/v1/ai/conversations/{id}/messages", OperationID: "aiPostMessage", Tag: "ai", Perm: router.Analyze,
			Summary:     "Ask: the answer streams as server-sent events (text/event-stream)",
			Description: "Each event is one line `data: <json>` and a blank line: {\"delta\":\"…\"} text fragments, then {\"done\":true,\"tokens_in\":N,\"tokens_out\":M}, or {\"error\":\"…\"} (the provider failed, the answer reached max_tokens, the client went away). The question and the answer are stored (an answer cut short with what had arrived, partial) and the exchange is an ai.analyze audit record (scope, provider, model, tokens, the SHA-256 of the context and of the whole request) committed with the answer. The scope's facts go with the first message and with refresh_context=true. Reasoning (<think> markup, reasoning fields) is stripped. A client that disconnects cancels the provider's call at once. Every check happens before the 200: an unknown preset or an empty question is 400, an archived or full conversation 409, a disabled or locked-out provider 503, more than ai.max_streams answers at once 503 with Retry-After." + aiOff,
			Do: router.RawIn(s.aiPostMessage,
				router.Response{Status: http.StatusOK, ContentType: "text/event-stream", Description: "the answer, as server-sent events"}),
			Errors:        map[int]string{404: "no such conversation (or another site's)", 409: "the conversation is archived or full", 503: "the provider is not ready, or too many answers are streaming"},
			FollowsClient: true},
		{Method: http.MethodGet, Path: "/api/v1/ai/providers", OperationID: "aiListProviders", Tag: "ai", Perm: router.GlobalAdmin,
			Summary:     "The providers (never the key: has_key)",
			Description: "Kinds and their wire formats: cloud-a OpenAI Chat Completions (POST /v1/chat/completions, SSE chunks ending data: [DONE], usage in the last chunk; models GET /v1/models); cloud-b Anthropic Messages (POST /v1/messages, x-api-key and anthropic-version 2023-06-01, named SSE events message_start … message_stop; models GET /v1/models); local-a Ollama (POST /api/chat, NDJSON ending done:true with prompt_eval_count and eval_count; models GET /api/tags); local-b llama.cpp server (POST /apply-template then /completion, SSE ending stop:true; models GET /v1/models); compat any OpenAI-compatible server (the cloud-a format, tolerant of missing usage and [DONE]). is_local: every address the base URL resolved to at registration is loopback, RFC 1918 or ULA." + aiOff,
			Do:          router.JSON(s.aiListProviders)},
		{Method: http.MethodPost, Path: "/api/v1/ai/providers", OperationID: "aiCreateProvider", Tag: "ai", Perm: router.GlobalAdmin,
			Summary:     "Add a provider (audited: ai.provider.create, key masked)",
			Description: "api_key is sealed in the vault bound to the row and never returned. The egress lock: with -ai-allow-cloud=false a base URL that resolves to anything but loopback, RFC 1918 or ULA addresses is refused (400 on base_url), and every connection is checked again after DNS resolution, redirects included; with it true a cloud provider still goes through the outbound guard. pseudonymise=false is accepted only for an is_local provider. A name already taken: 409." + aiOff,
			Do:          router.JSON(s.aiCreateProvider), Errors: map[int]string{409: "a provider with that name exists"}},
		{Method: http.MethodPut, Path: "/api/v1/ai/providers/{id}", OperationID: "aiUpdateProvider", Tag: "ai", Perm: router.GlobalAdmin,
			Summary: "Change a provider; an empty api_key keeps the stored key (audited: ai.provider.update, key masked)." + aiOff,
			Do:      router.JSON(s.aiUpdateProvider), Errors: map[int]string{404: "no such provider", 409: "a provider with that name exists"}},
		{Method: http.MethodDelete, Path: "/api/v1/ai/providers/{id}", OperationID: "aiDeleteProvider", Tag: "ai", Perm: router.GlobalAdmin,
			Summary: "Delete a provider; its conversations stay readable (audited: ai.provider.delete)." + aiOff,
			Do:      router.JSON(s.aiDeleteProvider), Errors: map[int]string{404: "no such provider"}},
		{Method: http.MethodPost, Path: "/api/v1/ai/providers/{id}/test", OperationID: "aiTestProvider", Tag: "ai", Perm: router.GlobalAdmin,
			Summary:     "Reach the provider: {ok:true, latency_ms, models} or {ok:false, error}",
			Description: "The error names the class of failure (unauthorized, not_found, rate_limited, timeout, unreachable — the egress lock's refusals are unreachable — …) and the HTTP status, never the provider's body." + aiOff,
			Do:          router.JSON(s.aiTestProvider), Errors: map[int]string{404: "no such provider"}},
		{Method: http.MethodGet, Path: "/api/v1/ai/providers/{id}/models", OperationID: "aiProviderModels", Tag: "ai", Perm: router.GlobalAdmin,
			Summary: "The provider's model list, from its own models route." + aiOff, Do: router.JSON(s.aiModels),
			Errors: map[int]string{404: "no such provider", 503: "the provider did not answer"}},
	}
}
