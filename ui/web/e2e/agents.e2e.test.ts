// The fleet pages in real Chromium against a real hub (-enroll-token,
// -agent-interval 1): two agents simulated over HTTP with the real agent
// protocol (hello with the static token, telemetry batches with increasing
// seq and counters) carrying hostile process names (RELIABILITY case 29);
// the Agents list, the agent detail with its history chart and connection
// table, rename, delete with its confirmation (the deleted agent's token
// then gets 401), and an enroll token created, shown once, copied, used,
// revoked (a hello with it then gets 401); screenshots in both themes.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, pageCsp, screenshot, setTheme, sleep, startHub, type Hub, type Watch } from './hub'
import { hello, SimAgent, type SimConnection } from './fleet'

const STATIC_TOKEN = 'e2e-static-enroll-token-0123456789'
const XSS_PROCESS = '<img src=x onerror=window.__xss=1>'
const XSS_REMOTE = '<svg onload=window.__xss=2>'
const RTL_PROCESS = '\u202Egnp.exe'
const LONG_PROCESS = `long-${'x'.repeat(195)}` // 200 characters
const MARKUP_NAME = '<b>x</b>'
const RENAMED = 'e2e-renamed-web'

// web: 250 000 B/s in, 50 000 B/s out on eth0 = 2.00 Mbit/s and 400 kbit/s
const webConns: SimConnection[] = [
  { proto: 'tcp', local_addr: '10.0.0.7:443', remote_addr: '198.51.100.4:51000', status: 'ESTABLISHED', pid: 101, process: XSS_PROCESS },
  { proto: 'tcp', local_addr: '10.0.0.7:22', remote_addr: '203.0.113.9:40022', status: 'ESTABLISHED', pid: 102, process: RTL_PROCESS },
  { proto: 'tcp', local_addr: '10.0.0.7:8080', remote_addr: XSS_REMOTE, status: 'SYN_RECV', pid: 103, process: LONG_PROCESS },
  { proto: 'udp', local_addr: '127.0.0.53:53', remote_addr: '', status: 'NONE', pid: 104, process: 'systemd-resolved' },
  { proto: 'tcp6', local_addr: '[::]:80', remote_addr: '', status: 'LISTEN', pid: 105, process: 'nginx' },
]
const dbConns: SimConnection[] = [
  { proto: 'tcp', local_addr: '10.0.0.8:5432', remote_addr: '10.0.0.7:50110', status: 'ESTABLISHED', pid: 201, process: 'postgres' },
  { proto: 'tcp', local_addr: '10.0.0.8:5432', remote_addr: '', status: 'LISTEN', pid: 201, process: 'postgres' },
  { proto: 'udp', local_addr: '10.0.0.8:123', remote_addr: '', status: 'NONE', pid: 202, process: 'chronyd' },
]

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let web: SimAgent
let db: SimAgent

interface ApiAgent {
  id: number
  name: string
  online: boolean
  conns: number
  rates: { name: string; rx_bps: number; tx_bps: number }[]
}

interface ApiEnrollToken {
  id: number
  name: string
  site: string
  expires_at: number
  max_uses: number
  uses: number
  state: string
}

async function apiGet<T>(path: string): Promise<T> {
  const r = await ctx.request.get(`${hub.url}${path}`)
  expect(r.status(), path).toBe(200)
  return (await r.json()) as T
}

async function agentsFromHub(): Promise<ApiAgent[]> {
  return apiGet<ApiAgent[]>('/api/v1/agents')
}

async function assertNoScriptRan(p: Page, w: Watch): Promise<void> {
  expect(await p.evaluate(() => (window as unknown as { __xss?: unknown }).__xss)).toBeUndefined()
  expect(w.dialogs).toEqual([])
  expect(await p.locator('img[src="x"], svg[onload], script:not([src]), b').count()).toBe(0)
}

const nav = () => page.getByRole('navigation', { name: 'Main' })
const agentsTable = () => page.getByTestId('agents-table')
const row = (id: number) => page.getByTestId(`agent-row-${id}`)

beforeAll(async () => {
  hub = await startHub({ extraArgs: ['-enroll-token', STATIC_TOKEN, '-agent-interval', '1'] })
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: hub.url })
  web = new SimAgent(hub.url, {
    name: 'e2e-web-01',
    machineId: 'e2e-machine-web-01',
    interfaces: [
      { name: 'eth0', rxRate: 250_000, txRate: 50_000, ppsRate: 200 },
      { name: 'lo', rxRate: 10_000, txRate: 10_000, ppsRate: 20 },
    ],
    connections: webConns,
  })
  db = new SimAgent(hub.url, {
    name: MARKUP_NAME,
    machineId: 'e2e-machine-db-01',
    interfaces: [{ name: 'ens3', rxRate: 125_000, txRate: 12_500, ppsRate: 100 }],
    connections: dbConns,
  })
  await web.enroll(STATIC_TOKEN)
  await db.enroll(STATIC_TOKEN)
  // 20 minutes of history (a batch every 30 s, rates swinging), then a
  // batch a second at the configured rates
  await web.backfill(40, 30)
  await db.backfill(40, 30)
  web.start()
  db.start()
  await login(page, hub)
})

afterAll(async () => {
  await web?.stop()
  await db?.stop()
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('fleet pages', () => {
  test('the hub refuses a hello without or with a wrong enroll token', async () => {
    expect((await hello(hub.url, '', { name: 'nobody', machine_id: 'e2e-none' })).status).toBe(401)
    expect((await hello(hub.url, 'not-the-static-token-at-all', { name: 'nobody', machine_id: 'e2e-none' })).status).toBe(401)
  })

  test('Agents: both agents online with their rates and connection counts; a name with markup is literal', async () => {
    // the hub's view first (the store writes batches within a second)
    await expect
      .poll(
        async () => {
          const as = await agentsFromHub()
          return as.filter((a) => a.online && a.conns > 0 && a.rates.some((r) => r.rx_bps > 0)).length
        },
        { timeout: 20_000 },
      )
      .toBe(2)
    await nav().getByRole('link', { name: 'Agents', exact: true }).click()
    await page.waitForURL(/\/agents$/)
    await expect.poll(() => agentsTable().locator('tbody tr').count(), { timeout: 15_000 }).toBe(2)
    const w = row(web.id)
    await expect.poll(() => w.textContent(), { timeout: 15_000 }).toContain('online')
    const wText = (await w.textContent()) ?? ''
    expect(wText).toContain('e2e-web-01')
    // eth0: 250 000 B/s in, 50 000 B/s out; lo (local traffic) is left out of the sums
    expect(wText).toContain('2.00 Mbit/s')
    expect(wText).toContain('400 kbit/s')
    expect(wText).toContain('pcap on eth0')
    expect(wText).toContain('127.0.0.1')
    expect(await w.locator('td').nth(5).textContent()).toBe('5') // connections
    const d = row(db.id)
    await expect.poll(() => d.textContent(), { timeout: 15_000 }).toContain('online')
    const dText = (await d.textContent()) ?? ''
    expect(dText).toContain(MARKUP_NAME)
    expect(dText).toContain('1.00 Mbit/s')
    expect(dText).toContain('100 kbit/s')
    expect(await d.locator('td').nth(5).textContent()).toBe('3')
    await expect.poll(() => page.locator('.page-head .pill').textContent(), { timeout: 15_000 }).toBe('2 of 2 online')
    await assertNoScriptRan(page, watch)
    await screenshot(page, 'fleet-agents-light')
  })

  test('Agent detail: details, interface rates, the history chart and the connections shown literally', async () => {
    // the hub's history: the 20 backfilled minutes and the live batches, in
    // bytes/s (eth0 in and out; lo is local) and packets/s
    type Point = { ts: number; in: number; out: number; local: number; pps: number }
    await expect.poll(async () => (await apiGet<Point[]>(`/api/v1/agents/${web.id}/history?minutes=60`)).length, { timeout: 15_000 }).toBeGreaterThan(40)
    const hist = await apiGet<Point[]>(`/api/v1/agents/${web.id}/history?minutes=60`)
    expect(hist.at(-1)!.ts - hist[0].ts).toBeGreaterThan(15 * 60)
    expect(hist.at(-1)).toMatchObject({ in: 250_000, out: 50_000, local: 10_000, pps: 400 })
    await row(web.id).getByRole('link', { name: 'e2e-web-01' }).click()
    await page.waitForURL(new RegExp(`/agents/${web.id}$`))
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toContain('e2e-web-01')
    await expect.poll(() => page.locator('.page-head .pill').textContent(), { timeout: 5_000 }).toBe('online')
    const details = (await page.getByTestId('agent-details').textContent()) ?? ''
    expect(details).toContain('linux/amd64')
    expect(details).toContain('e2e-1.0.0')
    expect(details).toContain('pcap on eth0')
    expect(details).toMatch(/Last seen\s*just now/)
    const ifaces = page.getByTestId('agent-ifaces-table')
    await expect.poll(() => ifaces.textContent()).toContain('eth0')
    const eth0 = ifaces.locator('tbody tr', { hasText: 'eth0' })
    expect(await eth0.locator('td').nth(1).textContent()).toBe('2.00 Mbit/s')
    expect(await eth0.locator('td').nth(2).textContent()).toBe('400 kbit/s')
    // the history chart draws on a canvas
    const chart = page.getByTestId('agent-chart')
    await chart.waitFor({ timeout: 15_000 })
    await expect.poll(() => chart.locator('canvas').count()).toBeGreaterThan(0)
    const box = await chart.boundingBox()
    expect(box!.height).toBeGreaterThan(200)
    // the connections of the last batch, hostile text literal
    const conns = page.getByTestId('agent-conns-table')
    await expect.poll(() => conns.locator('tbody tr').count()).toBe(5)
    const text = (await conns.textContent()) ?? ''
    expect(text).toContain(XSS_PROCESS)
    expect(text).toContain(XSS_REMOTE)
    expect(text).toContain('U+202Egnp.exe') // the RTL override as a visible marker
    expect(text).toContain(LONG_PROCESS)
    expect(text).toContain('systemd-resolved')
    const titles = await conns.locator('bdi.safe').evaluateAll((els) => els.map((e) => e.getAttribute('title')))
    expect(titles).toContain(RTL_PROCESS)
    // the 200-character name does not widen the page beyond the viewport
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280)
    // hovering the chart shows the tooltip with numbers only
    await chart.hover({ position: { x: box!.width - 30, y: box!.height / 2 } })
    await sleep(300)
    await assertNoScriptRan(page, watch)
    await screenshot(page, 'fleet-agent-detail-light')
  })

  test('rename: the new name shows on the detail page and in the list', async () => {
    const input = page.getByLabel('Display name')
    await input.fill(RENAMED)
    await page.getByRole('button', { name: 'Rename', exact: true }).click()
    await expect.poll(() => page.getByTestId('agent-rename-msg').textContent()).toBe('Renamed.')
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain(RENAMED)
    expect((await agentsFromHub()).find((a) => a.id === web.id)?.name).toBe(RENAMED)
    await nav().getByRole('link', { name: 'Agents', exact: true }).click()
    await page.waitForURL(/\/agents$/)
    await expect.poll(() => row(web.id).textContent()).toContain(RENAMED)
    expect(await agentsTable().textContent()).not.toContain('e2e-web-01')
    // renaming is the hub's display name only: the agent keeps reporting
    const sent = web.sent
    await expect.poll(() => web.sent, { timeout: 10_000 }).toBeGreaterThan(sent)
    expect(web.lastStatus).toBe(200)
  })

  test('delete: the confirmation names the agent literally; it is gone and its token gets 401', async () => {
    await row(db.id).getByRole('link', { name: MARKUP_NAME }).click()
    await page.waitForURL(new RegExp(`/agents/${db.id}$`))
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain(MARKUP_NAME)
    await page.getByRole('button', { name: 'Delete agent', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete this agent?' })
    await dialog.waitFor()
    expect(await dialog.textContent()).toContain(`The agent ${MARKUP_NAME} and all its telemetry are deleted`)
    await assertNoScriptRan(page, watch)
    await screenshot(page, 'fleet-agent-delete-dialog-light')
    // Cancel keeps it
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await expect.poll(() => dialog.isVisible()).toBe(false)
    expect((await agentsFromHub()).map((a) => a.id)).toContain(db.id)
    await page.getByRole('button', { name: 'Delete agent', exact: true }).click()
    await dialog.getByRole('button', { name: 'Delete agent' }).click()
    await page.waitForURL(/\/agents$/)
    await expect.poll(() => page.getByTestId('agent-deleted').textContent()).toBe(`Agent “${MARKUP_NAME}” deleted.`)
    await expect.poll(() => agentsTable().locator('tbody tr').count()).toBe(1)
    expect(await agentsTable().textContent()).not.toContain(MARKUP_NAME)
    expect(await row(db.id).count()).toBe(0)
    expect((await agentsFromHub()).map((a) => a.id)).toEqual([web.id])
    // its token stops working at once
    expect(await db.send()).toBe(401)
    await db.stop()
    expect((await ctx.request.get(`${hub.url}/api/v1/agents/${db.id}`)).status()).toBe(404)
    // the detail page of the deleted agent says so
    await page.goto(`${hub.url}/agents/${db.id}`)
    await expect.poll(() => page.getByText('This agent does not exist').count()).toBe(1)
    await assertNoScriptRan(page, watch)
  })

  test('Enroll tokens: create with site, expiry and uses; the secret is shown once and copies', async () => {
    await nav().getByRole('link', { name: 'Enroll tokens', exact: true }).click()
    await page.waitForURL(/\/admin\/enroll-tokens$/)
    await page.getByLabel('Name', { exact: true }).fill('e2e-branch')
    await page.getByLabel('Site', { exact: true }).fill('branch-1')
    await page.getByLabel('Expires', { exact: true }).selectOption('7')
    await page.getByLabel('Uses', { exact: true }).selectOption('10')
    const before = Math.floor(Date.now() / 1000)
    await page.getByRole('button', { name: 'Create enroll token' }).click()
    const box = page.getByTestId('enroll-created')
    await box.waitFor()
    expect(await box.textContent()).toContain('“e2e-branch” created')
    const secret = await page.getByTestId('enroll-secret').inputValue()
    expect(secret).toMatch(/^ent_\S{16,}$/)
    const copy = box.getByRole('button', { name: 'Copy the enroll token' })
    await copy.click()
    await expect.poll(() => copy.textContent()).toContain('Copied')
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
    await screenshot(page, 'fleet-enroll-created-light')

    const tokens = await apiGet<ApiEnrollToken[]>('/api/v1/enroll-tokens')
    const tok = tokens.find((t) => t.name === 'e2e-branch')!
    expect(tok).toMatchObject({ site: 'branch-1', max_uses: 10, uses: 0, state: 'active' })
    expect(Math.abs(tok.expires_at - (before + 7 * 86400))).toBeLessThan(60)
    const r = page.getByTestId(`enroll-row-${tok.id}`)
    await expect.poll(() => r.getByTestId('enroll-state').textContent()).toBe('active')
    const rText = (await r.textContent()) ?? ''
    expect(rText).toContain('branch-1')
    expect(rText).toContain('0 / 10')
    // tables show absolute times (24-hour clock), the relative one on hover
    const expires = new Date(tok.expires_at * 1000)
    const pad = (n: number) => String(n).padStart(2, '0')
    expect(rText).toContain(`${expires.getFullYear()}-${pad(expires.getMonth() + 1)}-${pad(expires.getDate())} ${pad(expires.getHours())}:${pad(expires.getMinutes())}`)
    const titles = await r.locator('time').evaluateAll((ts) => ts.map((t) => t.getAttribute('title') ?? ''))
    expect(titles.some((t) => /^in (6|7) d/.test(t))).toBe(true)
    expect(rText).toContain('by admin')
    expect(rText).toContain('any')

    // it enrolls an agent, bound to its site
    const a = await hello(hub.url, secret, { name: 'e2e-branch-pc', site: '', machine_id: 'e2e-machine-branch' })
    expect(a.status).toBe(200)
    const enrolled = (await apiGet<(ApiAgent & { site: string })[]>('/api/v1/agents')).find((x) => x.id === a.body.agent_id)
    expect(enrolled?.site).toBe('branch-1')

    // shown once: after a reload the secret is nowhere on the page
    await page.reload()
    await expect.poll(() => page.getByTestId(`enroll-row-${tok.id}`).textContent()).toContain('1 / 10')
    expect(await page.getByTestId('enroll-created').count()).toBe(0)
    expect(await page.content()).not.toContain(secret)
  })

  test('Enroll tokens: revoke shows state revoked; a hello with it then gets 401', async () => {
    const tok = (await apiGet<ApiEnrollToken[]>('/api/v1/enroll-tokens')).find((t) => t.name === 'e2e-branch')!
    const r = page.getByTestId(`enroll-row-${tok.id}`)
    await r.getByRole('button', { name: 'Revoke e2e-branch' }).click()
    const dialog = page.getByRole('dialog', { name: 'Revoke this enroll token?' })
    await dialog.waitFor()
    expect(await dialog.textContent()).toContain('“e2e-branch”')
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click()
    await expect.poll(() => r.getByTestId('enroll-state').textContent()).toBe('revoked')
    expect(await r.getByRole('button', { name: 'Revoke e2e-branch' }).count()).toBe(0)
    expect((await apiGet<ApiEnrollToken[]>('/api/v1/enroll-tokens')).find((t) => t.id === tok.id)?.state).toBe('revoked')
    // the page no longer shows the secret; the clipboard still has the copy
    const secret = await page.evaluate(() => navigator.clipboard.readText())
    expect(secret).toMatch(/^ent_/)
    const refused = await hello(hub.url, secret, { name: 'e2e-late', machine_id: 'e2e-machine-late' })
    expect(refused.status).toBe(401)
    expect(refused.body.error).toMatch(/revoked/)
    await assertNoScriptRan(page, watch)
  })

  test('a busy agent: its 600 connections are paged, the page stays short, and a remote address opens its host page naming the agent', async () => {
    const busyConns: SimConnection[] = Array.from({ length: 600 }, (_, i) => ({
      proto: 'tcp',
      local_addr: `10.9.0.1:${20000 + i}`,
      remote_addr: `203.0.113.${(i % 200) + 1}:443`,
      status: 'ESTABLISHED',
      pid: 1000 + i,
      process: 'busy-client',
    }))
    const busy = new SimAgent(hub.url, { name: 'e2e-busy', machineId: 'e2e-machine-busy', interfaces: [{ name: 'eth0', rxRate: 1000, txRate: 1000, ppsRate: 10 }], connections: busyConns })
    await busy.enroll(STATIC_TOKEN)
    expect(await busy.send()).toBe(200)
    // the store writes the batch within a second; the page reloads every 30 s
    await expect
      .poll(async () => (await apiGet<{ connections: unknown[] | null }>(`/api/v1/agents/${busy.id}`)).connections?.length ?? 0, { timeout: 10_000 })
      .toBe(600)
    await page.goto(`${hub.url}/agents/${busy.id}`)
    const conns = page.getByTestId('agent-conns-table')
    await expect.poll(() => conns.locator('tbody tr').count(), { timeout: 15_000 }).toBe(25)
    const pager = page.getByRole('navigation', { name: 'Connections pages' })
    expect(await pager.textContent()).toContain('1–25 of 600')
    await pager.getByRole('button', { name: 'Next ›' }).click()
    expect(await pager.textContent()).toContain('26–50 of 600')
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThan(4000)
    await screenshot(page, 'fleet-agent-busy')
    // the remote address of a connection opens its host page, which names the agent
    const link = conns.locator('a[href^="/hosts/203.0.113."]').first()
    const href = (await link.getAttribute('href')) ?? ''
    await link.click()
    await page.waitForURL((u) => u.pathname === href)
    await expect.poll(() => page.getByTestId('host-agents').textContent(), { timeout: 15_000 }).toContain('e2e-busy')
    await screenshot(page, 'host-from-agent')
    await assertNoScriptRan(page, watch)
  })

  test('screenshots of the fleet pages in both themes', async () => {
    const pages: [string, string][] = [
      ['fleet-agents', '/agents'],
      ['fleet-agent-detail', `/agents/${web.id}`],
      ['fleet-enroll-tokens', '/admin/enroll-tokens'],
    ]
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(page, theme)
      for (const [name, path] of pages) {
        await page.goto(`${hub.url}${path}`)
        await page.waitForLoadState('networkidle').catch(() => undefined)
        if (name === 'fleet-agent-detail') await page.getByTestId('agent-chart').locator('canvas').first().waitFor({ timeout: 15_000 })
        await sleep(500)
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme)
        await screenshot(page, `${name}-${theme}`)
      }
    }
    // the renamed agent is still online: it kept reporting all along
    expect((await agentsFromHub()).find((a) => a.id === web.id)?.online).toBe(true)
    await assertNoScriptRan(page, watch)
  })

  test('no dialog, CSP violation or page error happened', async () => {
    expect(watch.dialogs).toEqual([])
    expect(watch.pageErrors).toEqual([])
    expect(watch.cspViolations).toEqual([])
    expect(await pageCsp(page)).toEqual([])
  })
})
