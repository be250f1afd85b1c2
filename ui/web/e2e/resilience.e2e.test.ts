// The console when things go away, in real Chromium against the hub binary:
// a session that ends elsewhere closes the live feed and lands on sign-in
// within a second or two; a hub restart greys the figures and then recovers
// by itself; a script chunk that fails to load offers a reload; assets are
// served precompressed (brotli), and a first sign-in's transfer size and
// time to the first chart on a 10 Mbit/s link are measured.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, Page, Response } from 'playwright-core'
import { launchBrowser, login, screenshot, newWatchedContext, resultsDir, sleep, startHub, type Hub } from './hub'

let hub: Hub
let browser: Browser

beforeAll(async () => {
  // Sessions in the database survive the restart below (with the default
  // memory store a restart signs everyone out, and the page goes to sign-in).
  hub = await startHub({ extraArgs: ['-session-store', 'db'] })
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await hub?.stop()
})

async function connected(page: Page): Promise<void> {
  await expect.poll(() => page.getByTestId('ws-state').textContent(), { timeout: 20_000 }).toContain('Connected')
}

describe('delivery', () => {
  test('assets are precompressed: brotli to Chromium, 404 for an unknown chunk', async () => {
    const { ctx, page } = await newWatchedContext(browser)
    const assets: Response[] = []
    page.on('response', (r) => {
      if (new URL(r.url()).pathname.startsWith('/assets/')) assets.push(r)
    })
    await login(page, hub)
    await connected(page)
    const scripts = assets.filter((r) => /\.(js|css)$/.test(new URL(r.url()).pathname))
    expect(scripts.length).toBeGreaterThan(2)
    for (const r of scripts) {
      expect.soft(r.status(), r.url()).toBe(200)
      // The build leaves files of 1 KiB and less uncompressed (scripts/compress.mjs).
      if (Number(r.headers()['content-length'] ?? Infinity) <= 1024) continue
      expect.soft(r.headers()['content-encoding'], r.url()).toBe('br')
      expect.soft(r.headers()['vary'], r.url()).toContain('Accept-Encoding')
    }
    const missing = await fetch(`${hub.url}/assets/FlowsView-0000.js`)
    expect(missing.status).toBe(404)
    expect(missing.headers.get('content-type')).not.toContain('text/html')
    // JSON from the API is gzip-compressed on the fly (app/api/compress.go).
    const apiResp = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/openapi.json')
    await page.evaluate(() => fetch('/api/openapi.json').then((r) => r.text()))
    const api = await apiResp
    expect(api.headers()['content-encoding']).toBe('gzip')
    const apiWire = (await api.request().sizes()).responseBodySize
    const apiRaw = (await api.body()).length
    console.log(`/api/openapi.json: ${apiRaw} bytes of JSON, ${apiWire} on the wire`)
    expect(apiWire).toBeLessThan(apiRaw / 4)
    const gz = await fetch(`${hub.url}${new URL(scripts[0].url()).pathname}`, { headers: { 'Accept-Encoding': 'gzip' } })
    expect(gz.headers.get('content-encoding')).toBe('gzip')
    await ctx.close()
  })

  test('first sign-in on a throttled 10 Mbit/s link: bytes moved and time to the first chart', async () => {
    const { ctx, page } = await newWatchedContext(browser)
    const cdp = await ctx.newCDPSession(page)
    await cdp.send('Network.enable')
    // 10 Mbit/s each way with 20 ms of latency, as DevTools' own presets do it.
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: 10e6 / 8, uploadThroughput: 10e6 / 8 })
    let bytes = 0
    cdp.on('Network.loadingFinished', (e: { encodedDataLength: number }) => (bytes += e.encodedDataLength))
    const t0 = Date.now()
    await login(page, hub)
    await page.locator('[data-testid="live-chart"] canvas').first().waitFor({ timeout: 30_000 })
    const firstChartMs = Date.now() - t0
    const figures = { transfer_kib: Math.round(bytes / 1024), first_chart_ms: firstChartMs }
    mkdirSync(resultsDir, { recursive: true })
    writeFileSync(join(resultsDir, 'first-login.json'), JSON.stringify(figures, null, 2) + '\n')
    console.log(`first sign-in on 10 Mbit/s: ${figures.transfer_kib} KiB transferred, first chart after ${firstChartMs} ms`)
    // 769 KB uncompressed before issue 15, 245 KiB with precompression and ECharts, 93 KiB with uPlot alone
    expect(figures.transfer_kib).toBeLessThan(150)
    await ctx.close()
  })
})

describe('resilience', () => {
  test('a session ended elsewhere closes the live feed and lands on sign-in', async () => {
    const { ctx, page } = await newWatchedContext(browser)
    let feedClosedAt = 0
    page.on('websocket', (ws) => {
      if (new URL(ws.url()).pathname === '/ws') ws.on('close', () => (feedClosedAt ||= Date.now()))
    })
    await login(page, hub)
    await page.waitForURL(/\/live/)
    await connected(page)
    const t0 = Date.now()
    // Sign out with the same session cookie from outside the page, as a
    // second tab would: the hub re-checks the feed each tick and closes it.
    const r = await ctx.request.post(`${hub.url}/api/logout`, { headers: { Origin: hub.url } })
    expect(r.status()).toBe(200)
    await page.waitForURL(/\/login/, { timeout: 5_000 })
    const ms = Date.now() - t0
    await expect.poll(() => feedClosedAt).toBeGreaterThan(0)
    console.log(`session ended elsewhere: feed closed after ${feedClosedAt - t0} ms, on the sign-in page after ${ms} ms`)
    // The hub re-checks the feed's credentials every tick (1 s).
    expect(feedClosedAt - t0).toBeLessThan(1_200)
    expect(ms).toBeLessThan(2_500)
    expect(page.url()).toContain('next=')
    await ctx.close()
  })

  test('a hub restart greys the figures, then the page recovers by itself', async () => {
    const { ctx, page, watch } = await newWatchedContext(browser)
    await login(page, hub)
    await page.waitForURL(/\/live/)
    await connected(page)
    // A first tick: figures to grey.
    await expect.poll(() => page.getByTestId('live-stats').getAttribute('data-ticked'), { timeout: 10_000 }).toBe('true')
    await expect.poll(() => page.getByTestId('live-stats').getAttribute('data-stale')).toBe('false')
    // The hub goes away (stopped, kept stopped until resume): the socket
    // drops and the figures grey with their age.
    await hub.pause()
    await expect.poll(() => page.getByTestId('live-stats').getAttribute('data-stale'), { timeout: 10_000 }).toBe('true')
    await expect.poll(() => page.getByTestId('stale-note').count()).toBe(1)
    await screenshot(page, 'live-hub-down-light')
    await hub.resume()
    // Back without a reload: the socket retries with backoff, then ticks flow.
    await expect.poll(() => page.getByTestId('ws-state').textContent(), { timeout: 40_000 }).toContain('Connected')
    await expect.poll(() => page.getByTestId('live-stats').getAttribute('data-stale'), { timeout: 10_000 }).toBe('false')
    expect(page.url()).toMatch(/\/live/)
    expect(watch.pageErrors).toEqual([])
    await ctx.close()
  })

  test('a restart of a hub with in-memory sessions signs everyone out: the page goes to sign-in by itself', async () => {
    const mem = await startHub()
    const { ctx, page } = await newWatchedContext(browser)
    try {
      await login(page, mem)
      await page.waitForURL(/\/live/)
      await connected(page)
      await mem.restart()
      // the socket's retry asks the hub whether the session survived: it did not
      await page.waitForURL(/\/login/, { timeout: 20_000 })
      expect(page.url()).toContain('next=')
    } finally {
      await ctx.close()
      await mem.stop()
    }
  })

  test('a script chunk that fails to load offers a reload that works', async () => {
    const { ctx, page } = await newWatchedContext(browser)
    await login(page, hub)
    await connected(page)
    // The Flows page's chunk is gone, as after an upgrade of the hub.
    await page.route(/\/assets\/FlowsView-[^/]+\.js$/, (route) => route.fulfill({ status: 404, body: 'gone' }))
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Flows', exact: true }).click()
    await expect.poll(() => page.getByTestId('reload-banner').count(), { timeout: 10_000 }).toBe(1)
    await page.unroute(/\/assets\/FlowsView-[^/]+\.js$/)
    await page.getByTestId('reload-button').click()
    await page.waitForURL(/\/flows/)
    await expect.poll(() => page.getByRole('heading', { level: 1 }).first().textContent(), { timeout: 10_000 }).toContain('Flows')
    expect(await page.getByTestId('reload-banner').count()).toBe(0)
    await sleep(100)
    await ctx.close()
  })
})
