// The assistant's API (issue 32; spec 2.8, 4.5, 6.2). The shapes are
// aliases of the generated src/api/openapi.ts (testdata/openapi/openapi.json),
// like types.ts: a field the hub renames fails vue-tsc here. Only the SSE
// event (a text/event-stream body the document cannot describe) and the
// closed sets are written by hand.
import type { components } from './openapi'
import { apiStream, del, get, post, put } from './client'

type S = components['schemas']

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

export type AIProvider = S['LLMProvider']

export type AIProviderInput = S['LLMProviderWrite']

export type AIProviderTest = S['LLMProviderTest']

/** {enabled:false} and nothing else when the assistant is off. */
export type AIStatus = Partial<S['AssistantStatus']> & { enabled: boolean }

export type AIPreset = S['AssistantPreset']

export type AIConversationInput = S['AssistantConversationCreate']

export type AIConversation = S['AssistantConversation']

export type AIRole = 'user' | 'assistant' | 'context'

export type AIMessage = S['AssistantMessage']

export type AIPseudonym = S['AssistantPseudonym']

export type AIConversationDetail = S['AssistantConversationDetail']

export type AIMessageInput = S['AssistantMessagePost']

/** ai.Event: one server-sent event of an answer (spec 6.2). */
export interface AIEvent {
  delta?: string
  done?: boolean
  tokens_in?: number
  tokens_out?: number
  error?: string
}

export type AIField = S['AssistantContextField']

export type AIPreviewFact = S['AssistantContextFact']

export type AIContextPreview = S['AssistantContextPreview']

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
