// An offline agent's figures are its last report, not the present (issue
// 28 item 16): once the hub counts an agent offline, the Agents list and
// the agent page show "—" for its rates and connections instead of the
// last batch's 2 Mbit/s and sockets. Against a real hub (-agent-interval 1:
// offline after three silent seconds) and an agent simulated over HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, screenshot, startHub, type Hub, type Watch } from './hub'
import { SimAgent } from './fleet'

const STATIC_TOKEN = 'e2e-static-enroll-token-0123456789'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let gone: SimAgent

beforeAll(async () => {
  hub = await startHub({ extraArgs: ['-enroll-token', STATIC_TOKEN, '-agent-interval', '1'] })
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  gone = new SimAgent(hub.url, {
    name: 'e2e-gone-01',
    machineId: 'e2e-machine-gone-01',
    interfaces: [{ name: 'eth0', rxRate: 250_000, txRate: 50_000, ppsRate: 200 }],
    connections: [{ proto: 'tcp', local_addr: '10.0.0.9:443', remote_addr: '198.51.100.4:51000', status: 'ESTABLISHED', pid: 101, process: 'nginx' }],
  })
  await gone.enroll(STATIC_TOKEN)
  // two batches: rates come from the difference of the last two
  await gone.send()
  await new Promise((ok) => setTimeout(ok, 1100))
  await gone.send()
  await login(page, hub)
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

type ApiAgent = { id: number; online: boolean; conns: number; rates: { rx_bps: number }[] }

describe('offline agent', () => {
  test('the list and the agent page show — for its rates and connections', async () => {
    const agent = async () => ((await (await ctx.request.get(`${hub.url}/api/v1/agents`)).json()) as ApiAgent[])[0]
    // the hub still holds the last batch's figures, and the agent is offline
    await expect.poll(async () => (await agent())?.online, { timeout: 20_000 }).toBe(false)
    const a = (await agent())!
    expect(a.conns).toBe(1)
    expect(a.rates.some((r) => r.rx_bps > 0)).toBe(true)

    await page.goto(`${hub.url}/agents`)
    const row = page.getByTestId(`agent-row-${gone.id}`)
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('offline')
    const cells = await row.locator('td').allTextContents()
    expect(cells.slice(3, 6)).toEqual(['—', '—', '—'])

    await page.goto(`${hub.url}/agents/${gone.id}`)
    await expect.poll(() => page.locator('.page-head .pill').textContent(), { timeout: 15_000 }).toBe('offline')
    const eth0 = page.getByTestId('agent-ifaces-table').locator('tbody tr', { hasText: 'eth0' })
    expect((await eth0.locator('td').allTextContents()).slice(1, 4)).toEqual(['—', '—', '—'])
    expect(await page.getByTestId('agent-details').textContent()).toMatch(/Connections\s*—/)
    expect(await page.getByTestId('agent-conns-table').count()).toBe(0)
    expect(await page.getByTestId('agent-conns-offline').textContent()).toContain('offline')
    expect(watch.pageErrors).toEqual([])
    await screenshot(page, 'agent-offline')
  })
})

// What the agent page offers each role is what the API lets it do: the
// rename is open to any signed-in identity but the read-only auditor
// (spec 4.6: PATCH is S; the auditor gets 403), the delete needs the
// agents permission. The page must neither offer a refused action nor
// hide an allowed one.
describe('the agent page offers what the role may do', () => {
  for (const [user, role, renameStatus] of [
    ['vic', 'viewer', 200],
    ['aud', 'auditor', 403],
  ] as const) {
    test(`${role}: rename ${renameStatus === 200 ? 'offered' : 'hidden'}, delete hidden, as the API answers`, async () => {
      const own = { headers: { Origin: hub.url } }
      const made = await ctx.request.post(`${hub.url}/api/v1/users`, { ...own, data: { username: user, password: `${user}-password-1`, role } })
      expect(made.status(), await made.text()).toBe(200)
      const other = await browser.newContext({ viewport: { width: 1280, height: 720 } })
      try {
        const p = await other.newPage()
        await login(p, hub, user, `${user}-password-1`)
        await p.goto(`${hub.url}/agents/${gone.id}`)
        await expect.poll(() => p.getByTestId('agent-details').count(), { timeout: 15_000 }).toBe(1)
        expect(await p.getByRole('button', { name: 'Rename' }).count()).toBe(renameStatus === 200 ? 1 : 0)
        expect(await p.getByLabel('Display name').count()).toBe(renameStatus === 200 ? 1 : 0)
        expect(await p.getByRole('button', { name: 'Delete agent' }).count()).toBe(0)
        // the API agrees with the page
        const rename = await p.request.patch(`${hub.url}/api/v1/agents/${gone.id}`, { headers: { Origin: hub.url }, data: { name: `by-${user}` } })
        expect(rename.status()).toBe(renameStatus)
        const del = await p.request.delete(`${hub.url}/api/v1/agents/${gone.id}`, { headers: { Origin: hub.url } })
        expect(del.status()).toBe(403)
      } finally {
        await other.close()
      }
    })
  }
})
