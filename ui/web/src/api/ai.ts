// The assistant's API (issue 32; spec 2.8, 4.5, 6.2), written by hand from
// app/ai/contract.go, app/ai/prompt (Mapping, Preview, Field) until the
// hub's OpenAPI document carries these routes: then each type below
// becomes an alias of the generated src/api/openapi.ts, like types.ts.
// Every shape of the assistant lives in this one file for that switch.
import { apiStream, del, get, post, put } from './client'

/** Scope kinds of a conversation, in the spec's order (ai.ScopeKinds). */
export const AI_SCOPES = ['fleet', 'agent', 'incident', 'anomaly', 'device'] as const
export type AIScopeKind = (typeof AI_SCOPES)[number]
/** Who started a conversation. */
export const AI_SOURCES = ['user', 'triage', 'nightly'] as const
export type AISource = (typeof AI_SOURCES)[number]
/** Provider wire formats. */
export const AI_KINDS = ['cloud-a', 'cloud-b', 'local-a', 'local-b', 'compat'] as const
export type AIProviderKind = (typeof AI_KINDS)[number]
/** One line on each wire format, for the provider form. */
export const AI_KIND_TEXT: Record<AIProviderKind, string> = {
  'cloud-a': 'OpenAI Chat Completions (POST /v1/chat/completions)',
  'cloud-b': 'Anthropic Messages (POST /v1/messages)',
  'local-a': 'Ollama (POST /api/chat)',
  'local-b': 'llama.cpp server (POST /completion)',
  compat: 'any OpenAI-compatible server (vLLM, LM Studio, LocalAI, …)',
}

/** ai.Provider: a provider as listed, never its key. */
export interface AIProvider {
  id: number
  name: string
  kind: AIProviderKind
  base_url: string
  default_model: string
  enabled: boolean
  has_key: boolean
  /** every address of the base URL is loopback, RFC 1918 or ULA */
  is_local: boolean
  no_think: boolean
  max_tokens: number
  temperature?: number
  pseudonymise: boolean
  created_ts: number
  updated_ts: number
}

/** ai.ProviderInput: the POST/PUT body; empty api_key on PUT keeps the key. */
export interface AIProviderInput {
  name: string
  kind: AIProviderKind
  base_url: string
  api_key: string
  default_model: string
  enabled?: boolean
  no_think: boolean
  max_tokens: number
  temperature?: number | null
  pseudonymise?: boolean
}

/** ai.ProviderTest: POST /api/v1/ai/providers/{id}/test. */
export interface AIProviderTest {
  ok: boolean
  latency_ms?: number
  models?: string[]
  error?: string
}

/** ai.Status: {enabled:false} when the assistant is off. */
export interface AIStatus {
  enabled: boolean
  providers?: AIProvider[]
  default_provider?: number
  default_model?: string
  has_ready_provider?: boolean
  allow_cloud?: boolean
  max_context_kb?: number
}

/** ai.Preset: a server-defined task. */
export interface AIPreset {
  id: string
  label: string
  scopes: AIScopeKind[]
  task: string
}

export interface AIConversationInput {
  scope_kind: AIScopeKind
  scope_ref: string
  /** 0: the default provider */
  provider_id: number
  /** '': the provider's default model */
  model: string
}

/** ai.Conversation. */
export interface AIConversation {
  id: number
  scope_kind: AIScopeKind
  scope_ref: string
  site: string
  source: AISource
  provider_id: number
  model: string
  title: string
  created_by: string
  created_ts: number
  updated_ts: number
  /** 0: active */
  archived_ts: number
  context_sha256: string
  context_bytes: number
  pseudonymised: boolean
}

export type AIRole = 'user' | 'assistant' | 'context'

/** ai.Message: content as sent or received, with pseudonym tokens. */
export interface AIMessage {
  id: number
  role: AIRole
  content: string
  tokens_in: number
  tokens_out: number
  error: string
  /** an answer cut short: content is what had arrived */
  partial: boolean
  created_ts: number
}

/** prompt.Mapping: one token and the real value it stands for. */
export interface AIPseudonym {
  token: string
  /** ip, ip6, mac, user, host or tok */
  kind: string
  value: string
}

/** ai.ConversationDetail. */
export interface AIConversationDetail {
  conversation: AIConversation
  messages: AIMessage[] | null
  pseudonyms: AIPseudonym[] | null
}

/** ai.MessageInput. */
export interface AIMessageInput {
  content: string
  preset: string
  refresh_context: boolean
}

/** ai.Event: one server-sent event of an answer (spec 6.2). */
export interface AIEvent {
  delta?: string
  done?: boolean
  tokens_in?: number
  tokens_out?: number
  error?: string
}

/** prompt.Field: one quoted value of a fact. */
export interface AIField {
  name: string
  value: string
  mark?: string
}

/** prompt.PreviewFact. */
export interface AIPreviewFact {
  source: string
  text: string
  fields?: AIField[] | null
  priority: number
}

/** prompt.Preview: GET /api/v1/ai/conversations/{id}/context. */
export interface AIContextPreview {
  bytes: number
  sha256: string
  text: string
  facts: AIPreviewFact[] | null
  omitted: number
  pseudonyms: AIPseudonym[] | null
}

export interface AIConversationFilter {
  scope?: string
  ref?: string
  source?: string
  archived?: boolean
}

const base = '/api/v1/ai'

// The status call is lib/aiStatus.ts's (the navigation's chunk); these
// are loaded with the assistant's pages only.
export const aiPresets = () => get<{ presets: AIPreset[] | null }>(`${base}/presets`)
export const aiConversations = (f: AIConversationFilter = {}) =>
  get<AIConversation[] | null>(`${base}/conversations`, { scope: f.scope, ref: f.ref, source: f.source, archived: f.archived ? true : undefined })
export const aiCreate = (body: AIConversationInput) => post<{ ok: boolean; id: number }>(`${base}/conversations`, body)
export const aiConversation = (id: number) => get<AIConversationDetail>(`${base}/conversations/${id}`)
export const aiArchive = (id: number) => del<unknown>(`${base}/conversations/${id}`)
export const aiContext = (id: number) => get<AIContextPreview>(`${base}/conversations/${id}/context`)
export const aiProviders = () => get<AIProvider[] | null>(`${base}/providers`)
export const aiCreateProvider = (body: AIProviderInput) => post<unknown>(`${base}/providers`, body)
export const aiUpdateProvider = (id: number, body: AIProviderInput) => put<unknown>(`${base}/providers/${id}`, body)
export const aiDeleteProvider = (id: number) => del<unknown>(`${base}/providers/${id}`)
export const aiTestProvider = (id: number) => post<AIProviderTest>(`${base}/providers/${id}/test`)
export const aiModels = (id: number) => get<unknown>(`${base}/providers/${id}/models`)

let presets: Promise<AIPreset[]> | null = null

/** The server's presets, asked once (they change only with the hub). */
export function loadPresets(): Promise<AIPreset[]> {
  presets ??= aiPresets().then(
    (r) => r?.presets ?? [],
    () => {
      presets = null
      return []
    },
  )
  return presets
}

/** Forgets the presets (tests). */
export function resetPresets(): void {
  presets = null
}

/** POSTs a message; the answer is the event stream (see lib/sse). */
export function postMessage(id: number, body: AIMessageInput, signal: AbortSignal): Promise<Response> {
  return apiStream(`${base}/conversations/${id}/messages`, body, signal)
}
