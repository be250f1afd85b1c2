// The assistant in the console (issue 32): the answer stream's parser
// (spec 6.2), the pseudonym reveal (the grammar of app/ai/prompt
// pseudo.go), and that answers are plain text — a model answer carrying a
// markdown image or link shows literally and creates no element that
// could load anything (prompt injection).
import { beforeEach, describe, expect, test, vi } from 'vitest'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { SSEParser, parseSSELine, readAnswer } from '../src/lib/sse'
import { matchToken, pseudonymMap, reveal, revealParts } from '../src/lib/pseudonyms'
import { resetAIStatus } from '../src/lib/aiStatus'
import { resetPresets, type AIContextPreview, type AIConversationDetail, type AIEvent, type AIPseudonym } from '../src/api/ai'
import { useSession } from '../src/stores/session'
import RevealText from '../src/components/ai/RevealText.vue'
import AssistantConversation from '../src/components/ai/AssistantConversation.vue'
import AssistantDrawer from '../src/components/ai/AssistantDrawer.vue'

const enc = new TextEncoder()

/** A body that yields these chunks (bytes split where the test says). */
function bodyOf(chunks: (string | Uint8Array)[], keepOpen = false, signal?: AbortSignal): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(c) {
      for (const ch of chunks) c.enqueue(typeof ch === 'string' ? enc.encode(ch) : ch)
      if (!keepOpen) c.close()
      signal?.addEventListener('abort', () => c.error(new DOMException('The operation was aborted.', 'AbortError')))
    },
  })
}

describe('SSE line parser', () => {
  test.each<[string, string, AIEvent | null]>([
    ['delta', 'data: {"delta":"Hello"}', { delta: 'Hello' }],
    ['no space after the colon', 'data:{"delta":"x"}', { delta: 'x' }],
    ['CRLF line end', 'data: {"delta":"x"}\r', { delta: 'x' }],
    ['done with the token counts', 'data: {"done":true,"tokens_in":812,"tokens_out":97}', { done: true, tokens_in: 812, tokens_out: 97 }],
    ['error', 'data: {"error":"provider: 429 rate limited"}', { error: 'provider: 429 rate limited' }],
    ['blank line between events', '', null],
    ['comment (keep-alive)', ': ping', null],
    ['other fields', 'event: message', null],
    ['unreadable JSON', 'data: {"delta":', { error: 'the hub sent an unreadable event' }],
    ['not an object', 'data: 42', { error: 'the hub sent an unreadable event' }],
    ['unknown and mistyped fields dropped', 'data: {"delta":"a","done":"yes","html":"<b>"}', { delta: 'a' }],
  ])('%s', (_desc, line, want) => {
    expect(parseSSELine(line)).toEqual(want)
  })

  test('lines split across chunks, several events in one chunk, the last line without a newline', () => {
    const p = new SSEParser()
    expect(p.push('da')).toEqual([])
    expect(p.push('ta: {"delta":"Hel')).toEqual([])
    expect(p.push('lo"}\n\ndata: {"delta":" wor"}\n\ndata: {"delta":"ld"}\n')).toEqual([{ delta: 'Hello' }, { delta: ' wor' }, { delta: 'ld' }])
    expect(p.push('\ndata: {"done":true,"tokens_in":3,"tokens_out":2}')).toEqual([])
    expect(p.end()).toEqual([{ done: true, tokens_in: 3, tokens_out: 2 }])
    expect(p.end()).toEqual([])
  })

  test('readAnswer: deltas in order, a UTF-8 character split between chunks, done', async () => {
    const bytes = enc.encode('data: {"delta":"Çok yüksek"}\n\n')
    const cut = 17 // inside the two bytes of "Ç"
    expect(bytes[cut - 1]).toBe(0xc3)
    const deltas: string[] = []
    const end = await readAnswer(bodyOf([bytes.slice(0, cut), bytes.slice(cut), 'data: {"delta":"!"}\n\ndata: {"done":true,"tokens_in":10,"tokens_out":4}\n\n']), (d) => deltas.push(d))
    expect(deltas).toEqual(['Çok yüksek', '!'])
    expect(end).toEqual({ done: true, tokensIn: 10, tokensOut: 4, error: '' })
  })

  test('readAnswer: an error event ends the answer and keeps the text that came before', async () => {
    const deltas: string[] = []
    const end = await readAnswer(bodyOf(['data: {"delta":"Part"}\n\ndata: {"error":"provider cut the stream"}\n\ndata: {"delta":"ignored"}\n\n']), (d) => deltas.push(d))
    expect(deltas).toEqual(['Part'])
    expect(end).toEqual({ done: false, tokensIn: 0, tokensOut: 0, error: 'provider cut the stream' })
  })

  test('readAnswer: a stream closed without done or error is not done (partial)', async () => {
    const end = await readAnswer(bodyOf(['data: {"delta":"half"}\n\n']), () => undefined)
    expect(end).toEqual({ done: false, tokensIn: 0, tokensOut: 0, error: '' })
  })
})

// the map of a conversation as GET /api/v1/ai/conversations/{id} gives it
const MAP: AIPseudonym[] = [
  { token: 'ip-1', kind: 'ip', value: '10.0.0.1' },
  { token: 'ip-10', kind: 'ip', value: '10.0.0.10' },
  { token: 'ip6-1', kind: 'ip6', value: '2001:db8::1' },
  { token: 'mac-1', kind: 'mac', value: 'aa:bb:cc:dd:ee:ff' },
  { token: 'user-1', kind: 'user', value: 'alice' },
  { token: 'host-1', kind: 'host', value: 'db-01' },
  { token: 'host-2', kind: 'host', value: 'Core Switch 1 (Bldg A)' },
  { token: 'tok-1', kind: 'tok', value: 'ip-3' },
]

describe('pseudonym reveal', () => {
  const names = pseudonymMap(MAP)
  test.each<[string, string, string]>([
    ['address with a port and a sentence dot', 'from ip-1:443 to ip-10.', 'from 10.0.0.1:443 to 10.0.0.10.'],
    ['ip6 is not read as ip', '[ip6-1]:80 and ip6-1/32', '[2001:db8::1]:80 and 2001:db8::1/32'],
    ['user at host', 'user-1@host-1', 'alice@db-01'],
    ['a name with spaces', 'host-2 is up', 'Core Switch 1 (Bldg A) is up'],
    ['MAC', 'mac-1 moved', 'aa:bb:cc:dd:ee:ff moved'],
    ['escaped token-looking text', 'syslog said tok-1', 'syslog said ip-3'],
    ['reverse DNS name', 'ip-1.in-addr.arpa', '10.0.0.1.in-addr.arpa'],
    ['glued to word characters: not a token', 'xip-1 ip-1x ip-1_ host-1a', 'xip-1 ip-1x ip-1_ host-1a'],
    ['unknown tokens stay', 'ip-7 and host-99', 'ip-7 and host-99'],
    ['a revealed value is not scanned again', 'tok-1', 'ip-3'],
    ['markdown around tokens', '**host-1** `ip-1`', '**db-01** `10.0.0.1`'],
  ])('%s', (_desc, text, want) => {
    expect(reveal(text, names)).toBe(want)
  })

  test('parts carry the token and kind of each revealed value', () => {
    expect(revealParts('ask user-1 on host-1', names)).toEqual([
      { text: 'ask ' },
      { text: 'alice', token: 'user-1', kind: 'user' },
      { text: ' on ' },
      { text: 'db-01', token: 'host-1', kind: 'host' },
    ])
    expect(revealParts('no tokens', pseudonymMap([]))).toEqual([{ text: 'no tokens' }])
  })

  test('matchToken follows the hub grammar', () => {
    expect(matchToken('ip-12 x', 0)).toBe(5)
    expect(matchToken('ip6-1', 0)).toBe(5)
    expect(matchToken('ip-', 0)).toBe(-1)
    expect(matchToken('ip-a', 0)).toBe(-1)
    expect(matchToken('ip6-x', 0)).toBe(-1)
    expect(matchToken('vlan-1', 0)).toBe(-1)
  })
})

const HOSTILE = 'See ![x](http://evil.test/x.png) and [click](http://evil.test/) or <img src=x onerror=alert(1)> on host-1'

test('RevealText: markdown image, link and HTML in an answer are literal text; tokens show the real value', () => {
  const w = mount(RevealText, { props: { text: HOSTILE, pseudonyms: pseudonymMap(MAP) } })
  expect(w.text()).toBe('See ![x](http://evil.test/x.png) and [click](http://evil.test/) or <img src=x onerror=alert(1)> on db-01')
  expect(w.findAll('img, a, script, iframe, object, svg').length).toBe(0)
  const tok = w.find('[data-token="host-1"]')
  expect(tok.text()).toBe('db-01')
  expect(tok.attributes('title')).toBe('host-1: the pseudonym the model saw for this host')
})

// ---- the conversation against a stubbed hub

function detailOf(o: Partial<AIConversationDetail> = {}): AIConversationDetail {
  return {
    conversation: {
      id: 5, scope_kind: 'agent', scope_ref: '7', site: 'hq', source: 'user', provider_id: 1, model: 'llama3.1:8b', title: 'Why is web-01 slow?',
      created_by: 'admin', created_ts: 1_764_300_000, updated_ts: 1_764_300_100, archived_ts: 0, context_sha256: 'ab'.repeat(32), context_bytes: 2048, pseudonymised: true,
    },
    messages: [
      { id: 1, role: 'context', content: '[agent] host-1 at ip-1', tokens_in: 0, tokens_out: 0, error: '', partial: false, created_ts: 1_764_300_000 },
      { id: 2, role: 'user', content: 'What is host-1 doing?', tokens_in: 0, tokens_out: 0, error: '', partial: false, created_ts: 1_764_300_001 },
      { id: 3, role: 'assistant', content: HOSTILE, tokens_in: 900, tokens_out: 40, error: '', partial: false, created_ts: 1_764_300_002 },
    ],
    pseudonyms: MAP,
    ...o,
  }
}

type Fake = (init: RequestInit) => unknown

function stubHub(routes: Record<string, Fake>) {
  const calls: { url: string; init?: RequestInit }[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      calls.push({ url, init })
      const h = routes[`${init.method ?? 'GET'} ${url.split('?')[0]}`]
      if (!h) return new Response(JSON.stringify({ error: 'not found' }), { status: 404 })
      const v = h(init)
      if (v instanceof ReadableStream) return { ok: true, status: 200, body: v, headers: new Headers({ 'Content-Type': 'text/event-stream' }) }
      return new Response(JSON.stringify(v), { status: 200 })
    }),
  )
  return calls
}

beforeEach(() => {
  setActivePinia(createPinia())
  vi.unstubAllGlobals()
  resetAIStatus()
  resetPresets()
})

describe('AssistantConversation', () => {
  test('stored messages: the answer is text, tokens revealed, presets of the scope only', async () => {
    stubHub({
      'GET /api/v1/ai/conversations/5': () => detailOf(),
      'GET /api/v1/ai/presets': () => ({
        presets: [
          { id: 'explain-agent', label: 'Explain this agent', scopes: ['agent'], task: 'Explain.' },
          { id: 'fleet-summary', label: 'Summarise the fleet', scopes: ['fleet'], task: 'Sum.' },
        ],
      }),
    })
    const w = mount(AssistantConversation, { props: { id: 5 } })
    await flushPromises()
    const answer = w.find('[data-role="assistant"]')
    expect(answer.text()).toContain('See ![x](http://evil.test/x.png) and [click](http://evil.test/) or <img src=x onerror=alert(1)> on db-01')
    expect(answer.text()).toContain('900 tokens in, 40 out')
    expect(w.findAll('img, a, script').length).toBe(0)
    expect(w.find('[data-role="user"]').text()).toContain('What is db-01 doing?')
    expect(w.findAll('[data-preset]').map((b) => b.text())).toEqual(['Explain this agent'])
  })

  test('a question streams live with the real names, Send off and Cancel offered', async () => {
    let body: unknown = null
    const calls = stubHub({
      'GET /api/v1/ai/conversations/5': () => detailOf({ messages: [] }),
      'GET /api/v1/ai/presets': () => ({ presets: [] }),
      'POST /api/v1/ai/conversations/5/messages': (init) => {
        body = JSON.parse(String(init.body))
        return bodyOf(['data: {"delta":"host-1 "}\n\ndata: {"delta":"looks ', 'fine"}\n\n'], true)
      },
    })
    const w = mount(AssistantConversation, { props: { id: 5 } })
    await flushPromises()
    await w.find('[data-testid="ai-question"]').setValue('  Is host-1 fine?  ')
    await w.find('form.ai-compose').trigger('submit')
    await flushPromises()
    expect(body).toEqual({ content: 'Is host-1 fine?', preset: '', refresh_context: false })
    const post = calls.find((c) => c.init?.method === 'POST')
    expect(post?.init?.credentials).toBe('same-origin')
    expect((post?.init?.headers as Record<string, string>)['Content-Type']).toBe('application/json')
    // streaming: the live answer shows the real name, Cancel is offered
    expect(w.find('[data-testid="ai-live"]').text()).toContain('db-01 looks fine')
    expect(w.find('[data-testid="ai-live"]').text()).toContain('streaming')
    expect(w.find('[data-testid="ai-cancel"]').exists()).toBe(true)
    expect(w.find('[data-testid="ai-send"]').attributes('disabled')).toBeDefined()
    w.unmount()
  })

  test('done: the stored question and answer (with its token counts) replace the live turn', async () => {
    let stored = detailOf({ messages: [] })
    stubHub({
      'GET /api/v1/ai/conversations/5': () => stored,
      'GET /api/v1/ai/presets': () => ({ presets: [{ id: 'explain-agent', label: 'Explain this agent', scopes: ['agent'], task: 'Explain.' }] }),
      'POST /api/v1/ai/conversations/5/messages': () => {
        stored = detailOf()
        return bodyOf(['data: {"delta":"ok"}\n\ndata: {"done":true,"tokens_in":900,"tokens_out":40}\n\n'])
      },
    })
    const w = mount(AssistantConversation, { props: { id: 5 } })
    await flushPromises()
    await w.find('[data-preset="explain-agent"]').trigger('click')
    await flushPromises()
    expect(w.find('[data-testid="ai-live"]').exists()).toBe(false)
    expect(w.findAll('[data-role="assistant"]').length).toBe(1)
    expect(w.find('[data-role="assistant"]').text()).toContain('900 tokens in, 40 out')
  })

  test('Cancel aborts the request and the answer is marked partial', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true })
    stubHub({
      'GET /api/v1/ai/conversations/5': () => detailOf({ messages: [] }),
      'GET /api/v1/ai/presets': () => ({ presets: [] }),
      'POST /api/v1/ai/conversations/5/messages': (init) => bodyOf(['data: {"delta":"The first half"}\n\n'], true, init.signal ?? undefined),
    })
    const w = mount(AssistantConversation, { props: { id: 5 } })
    await flushPromises()
    await w.find('[data-testid="ai-question"]').setValue('Why?')
    await w.find('form.ai-compose').trigger('submit')
    await flushPromises()
    await w.find('[data-testid="ai-cancel"]').trigger('click')
    await flushPromises()
    await vi.advanceTimersByTimeAsync(500)
    await flushPromises()
    vi.useRealTimers()
    const live = w.find('[data-testid="ai-live"]')
    // the hub stored nothing here: the live turn stays, marked partial
    expect(live.text()).toContain('The first half')
    expect(live.text()).toContain('partial')
    expect(w.text()).toContain('Answer cancelled: what had arrived is kept, marked partial.')
    expect(w.find('[data-testid="ai-cancel"]').exists()).toBe(false)
  })

  test('an error event is shown, with the text that had arrived marked partial', async () => {
    stubHub({
      'GET /api/v1/ai/conversations/5': () => detailOf({ messages: [] }),
      'GET /api/v1/ai/presets': () => ({ presets: [] }),
      'POST /api/v1/ai/conversations/5/messages': () => bodyOf(['data: {"delta":"Start"}\n\ndata: {"error":"provider timeout (idle 60s)"}\n\n']),
    })
    const w = mount(AssistantConversation, { props: { id: 5 } })
    await flushPromises()
    await w.find('[data-testid="ai-question"]').setValue('Why?')
    await w.find('form.ai-compose').trigger('submit')
    await flushPromises()
    expect(w.find('[role="alert"]').text()).toBe('provider timeout (idle 60s)')
    expect(w.find('[data-testid="ai-live"]').text()).toContain('partial')
  })

  test('a refusal before the stream (503) is the hub message', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit = {}) => {
        if (init.method === 'POST') return new Response(JSON.stringify({ error: 'too many answers streaming: try again' }), { status: 503, headers: { 'Retry-After': '5' } })
        if (url.startsWith('/api/v1/ai/presets')) return new Response(JSON.stringify({ presets: [] }))
        return new Response(JSON.stringify(detailOf({ messages: [] })))
      }),
    )
    const w = mount(AssistantConversation, { props: { id: 5 } })
    await flushPromises()
    await w.find('[data-testid="ai-question"]').setValue('Why?')
    await w.find('form.ai-compose').trigger('submit')
    await flushPromises()
    expect(w.find('[role="alert"]').text()).toBe('too many answers streaming: try again')
    // nothing was asked: no half turn shown, the question kept for a retry
    expect(w.find('[data-testid="ai-live"]').exists()).toBe(false)
    expect((w.find('[data-testid="ai-question"]').element as HTMLTextAreaElement).value).toBe('Why?')
  })

  test('What will be sent: size, SHA-256, facts as sent and the token table', async () => {
    const preview: AIContextPreview = {
      bytes: 1536, sha256: 'cd'.repeat(32), text: 'netmon facts…\n[agent] host-1',
      facts: [{ source: 'agent', text: 'agent host-1 at ip-1', fields: [{ name: 'os', value: 'linux' }], priority: 100 }],
      omitted: 2,
      pseudonyms: [MAP[0], MAP[5]],
    }
    stubHub({
      'GET /api/v1/ai/conversations/5': () => detailOf(),
      'GET /api/v1/ai/presets': () => ({ presets: [] }),
      'GET /api/v1/ai/conversations/5/context': () => preview,
    })
    const w = mount(AssistantConversation, { props: { id: 5 } })
    await flushPromises()
    await w.find('[data-testid="ai-preview-toggle"]').trigger('click')
    await flushPromises()
    const p = w.find('[data-testid="ai-preview"]')
    expect(p.find('[data-testid="ai-preview-bytes"]').text()).toBe('1.50 KiB')
    expect(p.text()).toContain('1,536 bytes')
    expect(p.find('[data-testid="ai-preview-sha"]').text()).toBe('cd'.repeat(32))
    expect(p.text()).toContain('2 facts left out')
    // facts are shown as sent: tokens, not names
    expect(p.find('[data-testid="ai-preview-facts"] tbody tr').text()).toContain('agent host-1 at ip-1')
    const rows = p.findAll('[data-testid="ai-preview-pseudonyms"] tbody tr').map((r) => r.findAll('td').map((c) => c.text()))
    expect(rows).toEqual([
      ['ip-1', 'ip', '10.0.0.1'],
      ['host-1', 'host', 'db-01'],
    ])
  })
})

describe('AssistantDrawer', () => {
  function signIn(perms: string[]) {
    useSession().apply({ required: true, authenticated: true, user: { username: 'ana', role: 'analyst', site: '' }, permissions: perms, read_only: false, roles: [] } as never)
  }

  test('hidden when the hub has the assistant off', async () => {
    signIn(['view', 'analyze'])
    stubHub({ 'GET /api/v1/ai/status': () => ({ enabled: false }) })
    const w = mount(AssistantDrawer, { props: { scopeKind: 'agent', scopeRef: '7' } })
    await flushPromises()
    expect(w.find('[data-testid="ai-drawer"]').exists()).toBe(false)
  })

  test('hidden without the analyze permission, and the status is not even asked', async () => {
    signIn(['view'])
    const calls = stubHub({ 'GET /api/v1/ai/status': () => ({ enabled: true }) })
    const w = mount(AssistantDrawer, { props: { scopeKind: 'agent', scopeRef: '7' } })
    await flushPromises()
    expect(w.find('[data-testid="ai-drawer"]').exists()).toBe(false)
    expect(calls).toEqual([])
  })

  test('collapsed when on: the panel is loaded only once opened', async () => {
    signIn(['view', 'analyze'])
    const calls = stubHub({ 'GET /api/v1/ai/status': () => ({ enabled: true, has_ready_provider: true, providers: [] }) })
    const w = mount(AssistantDrawer, { props: { scopeKind: 'device', scopeRef: '3', label: 'this device' } })
    await flushPromises()
    const d = w.find('[data-testid="ai-drawer"]')
    expect(d.exists()).toBe(true)
    expect(d.attributes('open')).toBeUndefined()
    expect(d.find('summary').text()).toBe('Assistant — ask the AI about this device (advice only)')
    expect(calls.map((c) => c.url)).toEqual(['/api/v1/ai/status'])
  })
})
