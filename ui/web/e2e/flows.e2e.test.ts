// The Flows page and the host page with real flow records: NetFlow v5
// datagrams sent to the hub's -flow-port over lo (from 127.0.0.1, the
// exporter), then the top-pairs chart, the filters kept in the URL, and
// the click-through from an address to its host page and from an exporter
// to the filtered view, in Chromium against the hub binary.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { freeUdpPort, launchBrowser, login, newWatchedContext, screenshot, sendUdp, setTheme, sleep, startHub, type Hub, type Watch } from './hub'

let hub: Hub
let flowPort: number
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch

interface V5Record {
  src: string
  dst: string
  sport: number
  dport: number
  proto: number
  packets: number
  octets: number
}

function ip4(b: Buffer, off: number, ip: string): void {
  ip.split('.').forEach((o, i) => b.writeUInt8(Number(o), off + i))
}

/** A NetFlow v5 datagram (header + 48-byte records) sent now, its flows
 * ended two minutes ago: their minute has closed, so the hub writes it at
 * once (a flow of the current minute is written when that minute closes,
 * up to about 65 s later). */
function netflowV5(seq: number, records: V5Record[]): Buffer {
  const uptime = 600_000
  const now = Math.floor(Date.now() / 1000)
  const h = Buffer.alloc(24)
  h.writeUInt16BE(5, 0)
  h.writeUInt16BE(records.length, 2)
  h.writeUInt32BE(uptime, 4)
  h.writeUInt32BE(now, 8)
  h.writeUInt32BE(0, 12)
  h.writeUInt32BE(seq, 16)
  const recs = records.map((r) => {
    const b = Buffer.alloc(48)
    ip4(b, 0, r.src)
    ip4(b, 4, r.dst)
    b.writeUInt32BE(r.packets, 16)
    b.writeUInt32BE(r.octets, 20)
    b.writeUInt32BE(uptime - 140_000, 24) // first: 140 s ago
    b.writeUInt32BE(uptime - 120_000, 28) // last: 120 s ago
    b.writeUInt16BE(r.sport, 32)
    b.writeUInt16BE(r.dport, 34)
    b.writeUInt8(r.proto, 38)
    return b
  })
  return Buffer.concat([h, ...recs])
}

const RECORDS: V5Record[] = [
  { src: '10.1.0.10', dst: '198.51.100.20', sport: 50000, dport: 443, proto: 6, packets: 900, octets: 9_000_000 },
  { src: '198.51.100.20', dst: '10.1.0.10', sport: 443, dport: 50000, proto: 6, packets: 600, octets: 600_000 },
  { src: '10.1.0.11', dst: '203.0.113.53', sport: 40000, dport: 53, proto: 17, packets: 40, octets: 4_000 },
  { src: '10.1.0.12', dst: '192.0.2.80', sport: 41000, dport: 80, proto: 6, packets: 300, octets: 3_000_000 },
]

beforeAll(async () => {
  flowPort = await freeUdpPort()
  hub = await startHub({ extraArgs: ['-flow-port', String(flowPort)] })
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await login(page, hub)
  for (let i = 0; i < 3; i++) await sendUdp(flowPort, [netflowV5(1 + i * RECORDS.length, RECORDS)])
  // the hub writes the closed minute's rows within a few seconds
  const deadline = Date.now() + 30_000
  for (;;) {
    const rows = (await (await ctx.request.get(`${hub.url}/api/v1/flows?minutes=15&limit=50`)).json()) as unknown[]
    if (rows.length >= 4) break
    if (Date.now() > deadline) throw new Error(`the hub stored ${rows.length} flow rows in 30 s:\n${hub.log()}`)
    await sleep(250)
  }
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('flows', () => {
  test('the top pairs chart draws bits/s per address pair, with the legend', async () => {
    await page.goto(`${hub.url}/flows`)
    const chart = page.getByTestId('flow-chart')
    await chart.locator('canvas').first().waitFor({ timeout: 15_000 })
    const legend = (await chart.getByTestId('chart-legend').textContent()) ?? ''
    expect(legend).toMatch(/10\.1\.0\.10 ↔ 198\.51\.100\.20|198\.51\.100\.20 ↔ 10\.1\.0\.10/)
    expect(legend).toMatch(/bit\/s/)
    await screenshot(page, 'flows-data-light')
  })

  test('filters live in the URL and survive a reload; an exporter and an address are links', async () => {
    await page.getByLabel('Address', { exact: true }).fill('10.1.0.11')
    await page.getByRole('button', { name: 'Filter', exact: true }).click()
    await expect.poll(() => page.url()).toContain('addr=10.1.0.11')
    const table = page.getByTestId('flows-table')
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1)
    expect(await table.textContent()).toContain('203.0.113.53')
    await page.reload()
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 10_000 }).toBe(1)
    expect(await page.getByLabel('Address', { exact: true }).inputValue()).toBe('10.1.0.11')
    // the protocol filter on top: UDP keeps it, TCP drops it
    await page.goto(`${hub.url}/flows?addr=10.1.0.11&proto=6`)
    await expect.poll(() => table.textContent(), { timeout: 10_000 }).toContain('No flows match the filters.')
    await page.getByRole('button', { name: 'Clear filters' }).click()
    await expect.poll(() => page.url()).not.toContain('addr=')
    await expect.poll(() => table.locator('tbody tr').count()).toBeGreaterThanOrEqual(4)
    // the exporter cell filters on it
    await table.locator('tbody tr').first().getByRole('link', { name: '127.0.0.1' }).click()
    await expect.poll(() => page.url()).toContain('exporter=127.0.0.1')
    // an address opens its host page, which lists its conversations and flows
    await table.locator('a[href="/hosts/198.51.100.20"]').first().click()
    await page.waitForURL(/\/hosts\/198\.51\.100\.20$/)
    await expect.poll(() => page.getByTestId('host-convs').textContent(), { timeout: 15_000 }).toContain('10.1.0.10')
    await expect.poll(() => page.getByTestId('host-flows').textContent()).toContain('10.1.0.10')
    await screenshot(page, 'host-flows-light')
  })

  test('screenshots in both themes', async () => {
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(page, theme)
      for (const [name, path] of [
        ['flows-data', '/flows'],
        ['host-flows', '/hosts/10.1.0.10'],
      ]) {
        await page.goto(`${hub.url}${path}`)
        await page.waitForLoadState('networkidle').catch(() => undefined)
        await screenshot(page, `${name}-${theme}`)
      }
    }
    expect(watch.dialogs).toEqual([])
    expect(watch.pageErrors).toEqual([])
  })
})
