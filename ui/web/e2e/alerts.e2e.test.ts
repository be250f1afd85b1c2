// The alert pages in real Chromium against a real hub (RELIABILITY case
// 29): an agent simulated over HTTP with the real protocol reports three
// connections to a listed port, two of them from processes with hostile
// names; the engine (every 5 s) raises three port events whose messages
// carry those names, and the correlation engine (every 30 s) groups the
// agent's three suspicious events into an incident (rule 5). The Alerts
// page, the incident's member events and the health score show everything
// as text; no script runs; ack works from the page.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, screenshot, sleep, startHub, type Hub, type Watch } from './hub'
import { SimAgent, type SimConnection } from './fleet'

const STATIC_TOKEN = 'e2e-static-enroll-token-alerts-01234'
const XSS_PROCESS = '<img src=x onerror=window.__xss=1>'
const RTL_PROCESS = '\u202Egnp.exe'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let agent: SimAgent

interface ApiEvent {
  id: number
  kind: string
  key: string
  message: string
  state: string
}

const conns: SimConnection[] = [
  { proto: 'tcp', local_addr: '10.0.0.7:50000', remote_addr: '198.51.100.7:4444', status: 'ESTABLISHED', pid: 101, process: 'curl' },
  { proto: 'tcp', local_addr: '10.0.0.7:50001', remote_addr: '198.51.100.8:4444', status: 'ESTABLISHED', pid: 102, process: XSS_PROCESS },
  { proto: 'tcp', local_addr: '10.0.0.7:50002', remote_addr: '198.51.100.9:4444', status: 'ESTABLISHED', pid: 103, process: RTL_PROCESS },
]

async function events(): Promise<ApiEvent[]> {
  const r = await ctx.request.get(`${hub.url}/api/v1/alerts/events?limit=100`)
  expect(r.status()).toBe(200)
  return ((await r.json()) as { events: ApiEvent[] }).events
}

async function waitFor<T>(what: string, ms: number, fn: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; hub log:\n${hub.log().slice(-3000)}`)
    await sleep(500)
  }
}

async function assertNoScriptRan(p: Page, w: Watch): Promise<void> {
  expect(await p.evaluate(() => (window as unknown as { __xss?: unknown }).__xss)).toBeUndefined()
  expect(w.dialogs).toEqual([])
  expect(await p.locator('img[src="x"], script:not([src])').count()).toBe(0)
}

beforeAll(async () => {
  hub = await startHub({ extraArgs: ['-enroll-token', STATIC_TOKEN, '-agent-interval', '1'] })
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await login(page, hub)
  const own = { headers: { Origin: hub.url } }
  const put = await ctx.request.put(`${hub.url}/api/alerts`, { ...own, data: { enabled: true, ports: { enabled: true, ports: [4444] }, new_proc: { enabled: true, ignore: [] } } })
  expect(put.status()).toBe(200)
  agent = new SimAgent(hub.url, { name: 'e2e-alerts', machineId: 'e2e-machine-alerts', interfaces: [{ name: 'eth0', rxRate: 1000, txRate: 1000, ppsRate: 10 }], connections: conns })
  await agent.enroll(STATIC_TOKEN)
  await agent.send()
  await waitFor('the three port events', 30_000, async () => ((await events()).filter((e) => e.kind === 'port').length === 3 ? true : undefined))
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await hub?.stop()
})

describe('alerts console', () => {
  test('hostile process names show as text on the Alerts page; ack works', async () => {
    await page.goto(`${hub.url}/alerts?kind=port`)
    const table = page.getByTestId('alerts-table')
    await expect.poll(async () => table.locator('tbody tr').count()).toBe(3)
    const text = await table.innerText()
    expect(text).toContain(`agent ${agent.id}: ${XSS_PROCESS} connected to suspicious port 4444 on 198.51.100.8`)
    // the RTL override as a visible marker, the raw value in the title
    expect(text).toContain(`agent ${agent.id}: U+202Egnp.exe connected to suspicious port 4444 on 198.51.100.9`)
    expect(await table.locator('bdi.safe').evaluateAll((els) => els.map((e) => e.getAttribute('title')))).toContain(
      `agent ${agent.id}: ${RTL_PROCESS} connected to suspicious port 4444 on 198.51.100.9`,
    )
    await assertNoScriptRan(page, watch)
    await screenshot(page, 'alerts-hostile')
    const xssRow = table.locator('tbody tr', { hasText: XSS_PROCESS })
    await xssRow.getByRole('button', { name: 'Ack' }).click()
    await expect.poll(async () => (await events()).find((e) => e.message.includes(XSS_PROCESS))?.state).toBe('ack')
    await expect.poll(async () => xssRow.locator('td').nth(5).innerText()).toBe('ack')
  })

  test('the incident of the three suspicious events lists them as text', async () => {
    await page.goto(`${hub.url}/incidents`)
    const table = page.getByTestId('incidents-table')
    // the correlation engine runs every 30 s
    await expect.poll(async () => table.locator('tbody tr', { hasText: `r5|agent${agent.id}` }).count(), { timeout: 45_000, interval: 2000 }).toBe(1)
    await table.locator('tbody tr', { hasText: `r5|agent${agent.id}` }).getByRole('button').first().click()
    const members = page.getByTestId('incident-events')
    await expect.poll(async () => members.locator('tbody tr').count()).toBe(3)
    expect(await members.innerText()).toContain(XSS_PROCESS)
    await assertNoScriptRan(page, watch)
  }, 60_000)

  test('the health score counts the open critical port event', async () => {
    await page.goto(`${hub.url}/live`)
    const score = page.getByTestId('health-score')
    // the XSS event was acknowledged: ack is still open
    await expect.poll(async () => score.innerText()).toContain('3 open alert events of severity 8 or above')
  })
})
