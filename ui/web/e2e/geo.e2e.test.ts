// Geo page (issue 20): the world map of /api/v1/geo drawn offline. The
// hub runs with the repository's GeoIP test database (so /geo/status is
// the hub's real "mmdb" answer); the per-country traffic of /api/v1/geo
// is fulfilled by the test, because placing traffic needs packets to
// public addresses, which these tests may not send. The country shapes
// come from the console's own lazy chunk: every request the page makes
// goes to the hub, and the shapes' chunk only once the Geo page opens.
import { copyFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, repoDir, screenshot, setTheme, startHub, type Hub, type Watch } from './hub'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
const requests: string[] = []

const GEO = [
  { country: 'US', name: 'United States', lat: 39.8, lon: -98.6, bytes: 5_000_000, sessions: 12 },
  { country: 'GB', name: 'United Kingdom', lat: 54, lon: -2, bytes: 2048, sessions: 1 },
  { country: 'SG', name: 'Singapore', lat: 1.35, lon: 103.8, bytes: 100, sessions: 1 },
]

beforeAll(async () => {
  const geoDir = mkdtempSync(join(tmpdir(), 'nm-geoip-'))
  copyFileSync(join(repoDir, 'testdata', 'geoip', 'maxmind-country.mmdb'), join(geoDir, 'maxmind-country.mmdb'))
  hub = await startHub({ extraArgs: ['-geoip-dir', geoDir] })
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  page.on('request', (r) => requests.push(r.url()))
  await page.route('**/api/v1/geo?**', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(GEO) }))
  await login(page, hub)
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('geo', () => {
  test('the map is not loaded before the Geo page opens', async () => {
    await page.goto(`${hub.url}/live`)
    await page.waitForLoadState('networkidle').catch(() => undefined)
    expect(requests.filter((u) => /\/assets\/worldmap-/.test(u))).toEqual([])
  })

  test('countries are shaded by bytes, offline', async () => {
    requests.length = 0
    await page.goto(`${hub.url}/geo`)
    const map = page.getByTestId('geo-map')
    await expect.poll(() => map.count(), { timeout: 10_000 }).toBe(1)
    expect(requests.filter((u) => /\/assets\/worldmap-[\w-]+\.js$/.test(u)).length).toBe(1)
    expect(requests.filter((u) => !u.startsWith(hub.url))).toEqual([])
    // 177 shapes in world-atlas 1:110m; US and GB shaded, US darker.
    expect(await map.locator('path').count()).toBe(177)
    const fill = (c: string) => map.locator(`path[data-country="${c}"]`).first().evaluate((e) => (e as SVGPathElement).style.fill)
    expect(await fill('US')).toBe('rgb(21, 101, 192)') // the largest: full opacity
    expect(await fill('GB')).toMatch(/^rgba\(21, 101, 192, 0\.\d+\)$/)
    expect(await fill('FR')).toBe('')
    expect(await map.locator('path[data-country="US"] title').first().textContent()).toBe('United States of America: 4.77 MiB, 12 remote addresses')
    // Singapore is too small for 1:110m: named under the map.
    await expect.poll(() => page.getByTestId('geo-unmapped').textContent()).toBe('Not on the map (too small at this scale): Singapore')
    const rows = await page.getByTestId('geo-table').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent).join('|')))
    expect(rows).toEqual(['United States|US|4.77 MiB|12', 'United Kingdom|GB|2.00 KiB|1', 'Singapore|SG|100 B|1'])
    expect(await page.getByTestId('geo-no-geoip').count()).toBe(0)
    await screenshot(page, 'geo-light')
    await setTheme(page, 'dark')
    await page.reload()
    await expect.poll(() => page.getByTestId('geo-map').count(), { timeout: 10_000 }).toBe(1)
    await screenshot(page, 'geo-dark')
    expect(watch.dialogs).toEqual([])
    expect(watch.pageErrors).toEqual([])
  })
})
