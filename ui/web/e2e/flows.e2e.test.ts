// The Flows page and the host page with real flow records: NetFlow v5
// datagrams sent to the hub's -flow-port over lo (from 127.0.0.1, the
// exporter), then the top-N chart by a chosen dimension (the hub's
// series), the filters kept in the URL and sent to the hub, the
// click-through from an address to its host page and from an exporter,
// port or series value to the filtered view, a replay 14 days old counted
// and shown, and the hub's own word on GeoIP, in Chromium against the hub
// binary.
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
function netflowV5(seq: number, records: V5Record[], exportAt: number = Math.floor(Date.now() / 1000)): Buffer {
  const uptime = 600_000
  const now = exportAt
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
  // The flow reads show the minute at once (open minutes are read); the
  // netflow.flow events come from the written minute, which the hub
  // writes within a few seconds (the minute is 2 minutes old): wait for
  // both, as the Events test below reads them.
  const deadline = Date.now() + 30_000
  for (;;) {
    const rows = (await (await ctx.request.get(`${hub.url}/api/v1/flows?minutes=15&limit=50`)).json()) as unknown[]
    const ev = (await (await ctx.request.get(`${hub.url}/api/v1/events?type=netflow.flow&since_min=15&limit=50`)).json()) as { events: unknown[] }
    if (rows.length >= 4 && ev.events.length > 0) break
    if (Date.now() > deadline) throw new Error(`the hub showed ${rows.length} flow rows and wrote ${ev.events.length} flow events in 30 s:\n${hub.log()}`)
    await sleep(250)
  }
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('flows', () => {
  test('the chart draws the top destinations as bits/s; the dimension lives in the URL and its values filter', async () => {
    await page.goto(`${hub.url}/flows`)
    const chart = page.getByTestId('flow-chart')
    await chart.locator('canvas').first().waitFor({ timeout: 15_000 })
    const legend = (await chart.getByTestId('chart-legend').textContent()) ?? ''
    // destinations by octets: 198.51.100.20 (27 MB), 192.0.2.80 (9 MB), 10.1.0.10, 203.0.113.53
    expect(legend).toMatch(/198\.51\.100\.20[\s\S]*192\.0\.2\.80[\s\S]*10\.1\.0\.10[\s\S]*203\.0\.113\.53/)
    expect(legend).toMatch(/bit\/s/)
    await screenshot(page, 'flows-data-light')
    // ports: the service side of each flow (443, 80, 53), from the hub's series
    const seriesReq = page.waitForRequest((r) => r.url().includes('/api/v1/flows/series') && r.url().includes('by=port'))
    await page.getByRole('group', { name: 'Chart dimension' }).getByText('ports', { exact: true }).click()
    await seriesReq
    await expect.poll(() => page.url()).toContain('dim=port')
    await expect.poll(() => page.getByTestId('series-keys').textContent(), { timeout: 10_000 }).toMatch(/^\s*443[\s\S]*80[\s\S]*53/)
    await page.reload()
    await expect.poll(() => page.getByTestId('series-keys').textContent(), { timeout: 10_000 }).toMatch(/^\s*443[\s\S]*80[\s\S]*53/)
    // a value of the dimension is a link to the filtered view
    await page.getByTestId('series-keys').getByRole('link', { name: '53', exact: true }).click()
    await expect.poll(() => page.url()).toContain('port=53')
    const table = page.getByTestId('flows-table')
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 10_000 }).toBe(1)
    expect(await table.textContent()).toContain('203.0.113.53')
  })

  test('filters live in the URL, go to the hub as query parameters and survive a reload; exporter, port and address are links', async () => {
    await page.goto(`${hub.url}/flows`)
    await page.getByLabel('Address', { exact: true }).fill('10.1.0.11')
    const flowsReq = page.waitForRequest((r) => r.url().includes('/api/v1/flows?') && r.url().includes('addr=10.1.0.11'))
    const convReq = page.waitForRequest((r) => r.url().includes('/api/v1/flows/conversations?') && r.url().includes('addr=10.1.0.11'))
    await page.getByRole('button', { name: 'Filter', exact: true }).click()
    await Promise.all([flowsReq, convReq])
    await expect.poll(() => page.url()).toContain('addr=10.1.0.11')
    const table = page.getByTestId('flows-table')
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1)
    expect(await table.textContent()).toContain('203.0.113.53')
    expect(await page.getByTestId('convs-table').locator('tbody tr').count()).toBe(1)
    await page.reload()
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 10_000 }).toBe(1)
    expect(await page.getByLabel('Address', { exact: true }).inputValue()).toBe('10.1.0.11')
    // the protocol filter on top: UDP keeps it, TCP drops it
    await page.goto(`${hub.url}/flows?addr=10.1.0.11&proto=6`)
    await expect.poll(() => table.textContent(), { timeout: 10_000 }).toContain('No flows match the filters.')
    // a bad value is the hub's 400, shown as it says
    await page.goto(`${hub.url}/flows?port=70000`)
    await expect.poll(() => page.getByRole('region', { name: 'Top flows' }).textContent(), { timeout: 10_000 }).toContain('query parameter "port": must be an integer between 1 and 65535')
    await page.getByRole('button', { name: 'Clear filters' }).click()
    await expect.poll(() => page.url()).not.toContain('port=')
    await expect.poll(() => table.locator('tbody tr').count()).toBeGreaterThanOrEqual(4)
    // the port cell filters on the service port
    await table.getByTestId('port-link').filter({ hasText: /^80$/ }).first().click()
    await expect.poll(() => page.url()).toContain('port=80')
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 10_000 }).toBe(1)
    expect(await table.textContent()).toContain('192.0.2.80')
    await page.getByRole('button', { name: 'Clear filters' }).click()
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

  test('the Events page filters on the hub: address from the host page, domain in the URL, a bad domain is the hub\'s 400', async () => {
    await page.goto(`${hub.url}/hosts/10.1.0.11`)
    const req = page.waitForRequest((r) => r.url().includes('/api/v1/events?') && r.url().includes('addr=10.1.0.11') && !r.url().includes('device='))
    await page.getByRole('link', { name: 'All events of 10.1.0.11' }).click()
    await req
    await page.waitForURL(/\/events\?addr=10\.1\.0\.11$/)
    const table = page.getByTestId('events-table')
    // the three datagrams' records of one minute and 5-tuple are one event
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 10_000 }).toBe(1)
    expect(await table.textContent()).toContain('netflow.flow')
    expect(await table.textContent()).toContain('203.0.113.53')
    const domReq = page.waitForRequest((r) => r.url().includes('/api/v1/events?') && r.url().includes('domain=*.example.com'))
    await page.getByLabel('Domain').fill('*.example.com')
    await page.getByRole('button', { name: 'Filter', exact: true }).click()
    await domReq
    await expect.poll(() => page.url()).toContain('domain=*.example.com')
    // a domain filter keeps no flow events
    await expect.poll(() => table.textContent(), { timeout: 10_000 }).toContain('No events match the filters.')
    await page.goto(`${hub.url}/events?domain=a%20b`)
    await expect.poll(() => page.getByRole('region', { name: /^Events/ }).textContent(), { timeout: 10_000 }).toContain('query parameter "domain": must be a host name, optionally after *.')
    await screenshot(page, 'events-light')
  })

  test('flows with timestamps 14 days in the past are counted and shown', async () => {
    const old = Math.floor(Date.now() / 1000) - 14 * 86400
    const replayed = Array.from({ length: 6 }, (_, i) => ({ src: `10.9.0.${i + 1}`, dst: '192.0.2.99', sport: 1000 + i, dport: 9999, proto: 17, packets: 1, octets: 100 }))
    await sendUdp(flowPort, [netflowV5(1000, replayed, old)])
    await page.goto(`${hub.url}/flows`)
    const note = page.getByTestId('retimed-note')
    await expect.poll(() => note.textContent(), { timeout: 10_000 }).toMatch(/6 flows received from\s+127\.0\.0\.1\s+with timestamps 14 days in the past/)
    await screenshot(page, 'flows-retimed-light')
  })

  test('the Live page says "no GeoIP database" because the hub says so', async () => {
    const status = (await (await ctx.request.get(`${hub.url}/api/v1/geo/status`)).json()) as { source: string }
    expect(status.source).toBe('none')
    await page.goto(`${hub.url}/`)
    await expect.poll(() => page.getByTestId('no-geoip').count(), { timeout: 10_000 }).toBe(1)
    // the host page's country note says the same
    await page.goto(`${hub.url}/hosts/198.51.100.20`)
    await expect.poll(() => page.getByTestId('host-geo-note').textContent(), { timeout: 10_000 }).toContain('this hub has no GeoIP database')
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
