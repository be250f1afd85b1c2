// The anomaly band on the agent page against a real hub (SQLite): a
// simulated agent's traffic shows as the actual line of GET
// /api/v1/anomaly/baseline; with no history the band is empty (no minute
// judged), which the note says in figures taken from the same answer.
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, screenshot, sleep, startHub, type Hub } from './hub'
import { SimAgent } from './fleet'

const TOKEN = 'e2e-static-enroll-token-anomaly-0123'
let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page

beforeAll(async () => {
  hub = await startHub({ extraArgs: ['-enroll-token', TOKEN, '-agent-interval', '1'] })
  browser = await launchBrowser()
  ;({ ctx, page } = await newWatchedContext(browser))
  await login(page, hub)
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await hub?.stop()
})

test('the agent page draws the actual series with its band note', async () => {
  const agent = new SimAgent(hub.url, { name: 'e2e-band', machineId: 'e2e-machine-band', interfaces: [{ name: 'eth0', rxRate: 125_000, txRate: 12_500, ppsRate: 10 }], connections: [] })
  await agent.enroll(TOKEN)
  for (let i = 0; i < 3; i++) {
    await agent.send()
    await sleep(1100)
  }
  const url = `${hub.url}/api/v1/anomaly/baseline?agent_id=${agent.id}&metric=in&hours=24`
  const b = await waitPoints(url)
  await page.goto(`${hub.url}/agents/${agent.id}`)
  const band = page.getByTestId('anomaly-band')
  await expect.poll(async () => band.getByTestId('anomaly-band-note').innerText()).toBe(
    `band: mean ± ${b.sensitivity}·sd by hour of day (UTC) over 7 days; 0 of ${b.points.length} minutes have a band of at least ${b.min_samples} samples`,
  )
  expect(await band.locator('canvas').count()).toBe(1)
  await band.getByText('out', { exact: true }).click()
  await expect.poll(async () => band.locator('canvas').count()).toBe(1)
  await screenshot(page, 'anomaly-band')
}, 120_000)

async function waitPoints(url: string): Promise<{ sensitivity: number; min_samples: number; points: { judged: boolean; actual: number }[] }> {
  const end = Date.now() + 90_000
  for (;;) {
    const r = await ctx.request.get(url)
    expect(r.status()).toBe(200)
    const b = (await r.json()) as { sensitivity: number; min_samples: number; points: { judged: boolean; actual: number }[] | null }
    if (b.points?.length) return { ...b, points: b.points }
    if (Date.now() > end) throw new Error(`no points in ${JSON.stringify(b)}`)
    await sleep(2000)
  }
}
