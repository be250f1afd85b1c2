// The assistant in real Chromium against a real hub started with -ai
// (issue 32), a fake OpenAI-compatible model server on loopback standing
// in for the provider. Written before the hub's /api/v1/ai routes landed:
// the file is named *.e2e.ts so the suite (e2e/**/*.e2e.test.ts) does not
// run it yet; rename it to assistant.e2e.test.ts once the routes exist.
//
// It checks what an operator sees: the provider added from the admin page
// (kind description, local, Test with latency and models), the assistant
// on the Live page (fleet scope), "What will be sent" (bytes, SHA-256,
// tokens with their real values), a streamed answer whose markdown image
// and link show as literal text and load nothing (the fake server counts
// every request for them: prompt injection), pseudonym tokens in the
// answer shown with the real value, Cancel marking an answer partial, and
// the Assistant page listing the conversation.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { freeTcpPort, launchBrowser, login, newWatchedContext, pageCsp, screenshot, startHub, type Hub, type Watch } from './hub'

const PRIVATE_IP = '10.9.8.7'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let llm: Server
let llmUrl = ''
/** requests for the image and link of the hostile answer: must stay 0 */
const baitHits: string[] = []
/** the chat requests the fake model received (what left the hub) */
const sent: string[] = []

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok) => {
    let b = ''
    req.on('data', (c: Buffer) => (b += c.toString()))
    req.on('end', () => ok(b))
  })
}

function chunk(res: ServerResponse, content: string): void {
  res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`)
}

/**
 * A minimal OpenAI-compatible server: GET /v1/models, and a streamed
 * POST /v1/chat/completions whose answer echoes the first pseudonym token
 * of the question (so the console must reveal it) next to a markdown
 * image and link pointing back here. A question containing "slow" gets
 * one fragment and then silence, for Cancel.
 */
async function startFakeModel(): Promise<void> {
  const port = await freeTcpPort()
  llmUrl = `http://127.0.0.1:${port}`
  llm = createServer(async (req, res) => {
    const url = req.url ?? ''
    if (url.startsWith('/bait')) {
      baitHits.push(url)
      res.writeHead(200, { 'Content-Type': 'image/png' }).end()
      return
    }
    if (req.method === 'GET' && url === '/v1/models') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model', object: 'model' }] }))
      return
    }
    if (req.method === 'POST' && url === '/v1/chat/completions') {
      const body = await readBody(req)
      sent.push(body)
      const msgs = (JSON.parse(body) as { messages: { role: string; content: string }[] }).messages
      const question = msgs.filter((m) => m.role === 'user').at(-1)?.content ?? ''
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' })
      if (question.includes('slow')) {
        chunk(res, 'The first half of a slow answer')
        return // never ends: the console's Cancel closes it
      }
      const token = /\b(?:ip6|ip|mac|user|host)-\d+\b/.exec(question)?.[0] ?? 'no-token'
      chunk(res, `Check ${token} first. `)
      chunk(res, `![x](${llmUrl}/bait/x.png) and [details](${llmUrl}/bait/link)`)
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 321, completion_tokens: 12 } })}\n\n`)
      res.end('data: [DONE]\n\n')
      return
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((ok) => llm.listen(port, '127.0.0.1', () => ok()))
}

beforeAll(async () => {
  await startFakeModel()
  hub = await startHub({ extraArgs: ['-ai', '-ai-allow-cloud=false'] })
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await login(page, hub)
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
  await new Promise<void>((ok) => (llm ? llm.close(() => ok()) : ok()))
})

async function assertNothingLoaded(p: Page, w: Watch): Promise<void> {
  expect(baitHits).toEqual([])
  expect(await p.locator('[data-testid="ai-messages"] img, [data-testid="ai-messages"] a').count()).toBe(0)
  expect(w.dialogs).toEqual([])
}

describe('the assistant', () => {
  test('navigation: the Assistant tab and the AI providers admin page appear with -ai', async () => {
    await page.goto(`${hub.url}/live`)
    const nav = page.getByRole('navigation', { name: 'Main' })
    await expect.poll(() => nav.getByRole('link', { name: 'Assistant' }).count()).toBe(1)
    expect(await nav.getByRole('link', { name: 'AI providers' }).count()).toBe(1)
  })

  test('admin: add the local provider, its kind described; Test shows latency and models', async () => {
    await page.goto(`${hub.url}/admin/ai-providers`)
    await page.getByLabel('Name', { exact: true }).fill('fake-local')
    await page.getByLabel('Kind').selectOption('compat')
    expect(await page.getByTestId('ai-kind-hint').textContent()).toBe('any OpenAI-compatible server (vLLM, LM Studio, LocalAI, …)')
    await page.getByLabel('Base URL').fill(llmUrl)
    await page.getByLabel('Default model').fill('fake-model')
    // a provider not yet saved cannot be unmasked: locality is the hub's finding
    expect(await page.getByTestId('ai-pseudonymise').isDisabled()).toBe(true)
    await page.getByRole('button', { name: 'Add provider' }).click()
    const table = page.getByTestId('ai-providers-table')
    await expect.poll(() => table.textContent()).toContain('fake-local')
    expect(await table.textContent()).toContain('local')
    await page.getByRole('button', { name: 'Test fake-local' }).click()
    await expect.poll(() => page.getByTestId('ai-provider-test').first().textContent(), { timeout: 15_000 }).toMatch(/^ok, [\d.]+ ms; models: fake-model$/)
    await screenshot(page, 'ai-providers')
  })

  test('Live: start a fleet conversation, preview what will be sent', async () => {
    await page.goto(`${hub.url}/live`)
    const drawer = page.getByTestId('ai-drawer')
    await drawer.locator('summary').click()
    await drawer.getByTestId('ai-new').click()
    await expect.poll(() => drawer.getByTestId('ai-conversation').count(), { timeout: 15_000 }).toBe(1)
    await drawer.getByTestId('ai-preview-toggle').click()
    const preview = drawer.getByTestId('ai-preview')
    await expect.poll(() => preview.getByTestId('ai-preview-sha').textContent(), { timeout: 15_000 }).toMatch(/^[0-9a-f]{64}$/)
    expect(await preview.getByTestId('ai-preview-bytes').textContent()).toMatch(/\d/)
  })

  test('an answer streams in as plain text: markdown image and link load nothing, the token shows the real address', async () => {
    const drawer = page.getByTestId('ai-drawer')
    await drawer.getByTestId('ai-question').fill(`Is ${PRIVATE_IP} scanning the network?`)
    await drawer.getByTestId('ai-send').click()
    const answer = drawer.locator('[data-role="assistant"]').last()
    await expect.poll(() => answer.textContent(), { timeout: 30_000 }).toContain('[details](')
    await expect.poll(() => answer.textContent(), { timeout: 15_000 }).toContain('321 tokens in, 12 out')
    // the question left the hub pseudonymised, and came back revealed
    expect(sent.at(-1)).not.toContain(PRIVATE_IP)
    const text = (await answer.textContent()) ?? ''
    expect(text).toContain(`Check ${PRIVATE_IP} first.`)
    expect(text).toContain(`![x](${llmUrl}/bait/x.png) and [details](${llmUrl}/bait/link)`)
    expect(await answer.locator('[data-token^="ip-"]').first().textContent()).toBe(PRIVATE_IP)
    // the token the model saw is the preview table's, beside the real value
    const rows = await drawer.getByTestId('ai-preview-pseudonyms').locator('tbody tr').allTextContents()
    expect(rows.some((r) => r.includes(PRIVATE_IP))).toBe(true)
    await page.waitForTimeout(1000)
    await assertNothingLoaded(page, watch)
    await screenshot(page, 'ai-answer')
  })

  test('Cancel stops a slow answer; what had arrived is kept, marked partial', async () => {
    const drawer = page.getByTestId('ai-drawer')
    await drawer.getByTestId('ai-question').fill('a slow one please')
    await drawer.getByTestId('ai-send').click()
    const live = drawer.getByTestId('ai-live')
    await expect.poll(() => live.textContent(), { timeout: 30_000 }).toContain('The first half of a slow answer')
    await drawer.getByTestId('ai-cancel').click()
    const last = drawer.locator('[data-role="assistant"]').last()
    await expect.poll(() => last.textContent(), { timeout: 15_000 }).toContain('partial')
    expect(await last.textContent()).toContain('The first half of a slow answer')
    expect(await drawer.getByTestId('ai-cancel').count()).toBe(0)
  })

  test('the Assistant page lists the conversation with its filters in the URL', async () => {
    await page.goto(`${hub.url}/ai?scope=fleet&source=user`)
    const table = page.getByTestId('ai-conversations')
    await expect.poll(() => table.locator('tbody tr[data-conv]').count(), { timeout: 15_000 }).toBe(1)
    await table.locator('tbody tr[data-conv] button').first().click()
    await page.waitForURL(/[?&]open=\d+/)
    await expect.poll(() => page.getByTestId('ai-conversation').locator('[data-role="assistant"]').count()).toBe(2)
    await assertNothingLoaded(page, watch)
    await screenshot(page, 'ai-page')
  })

  test('no CSP violation and no page error', async () => {
    expect(watch.pageErrors).toEqual([])
    expect(watch.cspViolations).toEqual([])
    expect(await pageCsp(page)).toEqual([])
  })
})
