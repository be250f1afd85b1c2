// The console in real Chromium against a real hub: sign in, the live
// chart moving with a capture on lo, a recording downloaded, a user and an
// API token created and seen in the audit log, role-limited navigation,
// the CSRF guard, the reconnecting live socket, and screenshots of every
// page in both themes.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import {
  launchBrowser,
  login,
  loopbackTraffic,
  newWatchedContext,
  pageCsp,
  resultsDir,
  screenshot,
  sendUdp,
  setTheme,
  sleep,
  startHub,
  type Hub,
  type Watch,
} from './hub'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let traffic = true

// Background loopback traffic while the suite runs (the hub fetching itself).
async function trafficLoop(): Promise<void> {
  while (traffic) {
    await loopbackTraffic(hub, 4)
    // 127.0.0.1 -> 127.0.0.5: an endpoint of the capture on lo
    await sendUdp(9, [Buffer.from('netmon e2e')], '127.0.0.5').catch(() => undefined)
    await sleep(150)
  }
}

async function canvasImage(p: Page): Promise<string> {
  return p.locator('[data-testid="live-chart"] canvas').first().evaluate((c) => (c as HTMLCanvasElement).toDataURL())
}

beforeAll(async () => {
  hub = await startHub()
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
})

afterAll(async () => {
  traffic = false
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('console', () => {
  test('a wrong password gets a clear message', async () => {
    await page.goto(`${hub.url}/live`)
    await page.waitForURL(/\/login/)
    await page.getByLabel('Password', { exact: true }).fill('not-the-password')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong password')
  })

  test('signs in with the bootstrap password and lands on Live', async () => {
    await login(page, hub)
    await page.waitForURL(/\/live/)
    await expect.poll(() => page.getByTestId('ws-state').textContent(), { timeout: 15_000 }).toContain('Connected')
    const nav = page.getByRole('navigation', { name: 'Main' })
    for (const name of ['Live', 'History', 'Compare', 'Agents', 'Flows', 'Syslog', 'Users', 'API tokens', 'Enroll tokens', 'Audit log']) {
      await expect.poll(() => nav.getByRole('link', { name, exact: true }).count()).toBe(1)
    }
  })

  test('capture on lo via the UI: the live chart moves between ticks', async () => {
    await page.getByLabel('Interface').selectOption('lo')
    await page.getByTestId('capture-start').click()
    await expect.poll(() => page.getByTestId('capture-state').textContent(), { timeout: 15_000 }).toContain('Capturing on lo')
    void trafficLoop()
    // wait for traffic to show, then compare two ticks apart
    await expect.poll(async () => (await page.getByTestId('live-stats').textContent()) ?? '', { timeout: 20_000 }).toMatch(/Local[\d.]+ [kMG]?bit\/s/)
    await expect.poll(async () => Number((await page.getByTestId('live-stats').textContent())?.match(/Local([\d.]+)/)?.[1] ?? 0), { timeout: 20_000 }).toBeGreaterThan(0)
    const before = await canvasImage(page)
    const statsBefore = await page.getByTestId('live-stats').textContent()
    await sleep(2500)
    const after = await canvasImage(page)
    const statsAfter = await page.getByTestId('live-stats').textContent()
    expect(after).not.toBe(before)
    expect(statsAfter).not.toBe(statsBefore)
    await expect.poll(() => page.getByTestId('endpoints-table').textContent(), { timeout: 10_000 }).toContain('127.0.0.5')
  })

  test('the rate chart: out below the axis, local off until asked for, legend with last/min/max/avg and the time zone', async () => {
    const legend = page.locator('[data-testid="live-chart"] [data-testid="chart-legend"]')
    const text = (await legend.textContent()) ?? ''
    for (const h of ['Last', 'Min', 'Max', 'Avg']) expect(text).toContain(h)
    expect(text).toMatch(/Times in .*24-hour clock/)
    expect(text).toContain('Out (below the axis)')
    // Local starts off, but on lo In and Out are flat: the chart shows
    // Local by itself rather than an empty plot; switched off by hand it stays off
    const local = legend.getByLabel('Show Local')
    await expect.poll(() => local.isChecked(), { timeout: 5_000 }).toBe(true)
    await local.uncheck()
    await sleep(2200)
    expect(await local.isChecked()).toBe(false)
    await local.check()
    // the x axis reads 24-hour times: no AM/PM
    expect(await page.locator('[data-testid="live-chart"] .u-axis').first().textContent()).not.toMatch(/[ap]m/i)
  })

  test('every IP address on the Live page opens its host page', async () => {
    const table = page.getByTestId('endpoints-table')
    await expect.poll(() => table.locator('a[href="/hosts/127.0.0.5"]').count(), { timeout: 15_000 }).toBe(1)
    // each address cell of the endpoint table is a link to /hosts/<that address>
    const cells = await table.locator('tbody tr td:nth-child(2)').evaluateAll((tds) =>
      tds.map((td) => ({ text: td.textContent?.trim() ?? '', href: td.querySelector('a')?.getAttribute('href') ?? '' })),
    )
    expect(cells.length).toBeGreaterThan(0)
    for (const c of cells) expect(c.href, c.text).toBe(`/hosts/${c.text}`)
    // and so is every address-looking link elsewhere on the page
    const links = await page.locator('a[data-testid="host-link"]').evaluateAll((as) => as.map((a) => ({ text: a.textContent ?? '', href: a.getAttribute('href') ?? '' })))
    for (const l of links) expect(l.href, l.text).toBe(`/hosts/${l.text.replace(/^\[|\]?(:\d+)?$/g, '')}`)
    await table.locator('a[href="/hosts/127.0.0.5"]').click()
    await page.waitForURL(/\/hosts\/127\.0\.0\.5$/)
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toContain('127.0.0.5')
    await expect.poll(() => page.getByTestId('host-details').textContent(), { timeout: 10_000 }).toMatch(/Captured.*since capture start/)
    await page.goBack()
    await page.waitForURL(/\/live/)
  })

  test('starts and stops a recording and downloads the file', async () => {
    await page.getByTestId('rec-start').click()
    await expect.poll(() => page.getByTestId('rec-state').count(), { timeout: 10_000 }).toBe(1)
    await expect
      .poll(async () => Number(((await page.getByTestId('rec-counters').textContent()) ?? '').match(/([\d,]+) packets/)?.[1]?.replace(/,/g, '') ?? 0), { timeout: 15_000 })
      .toBeGreaterThan(0)
    await page.getByTestId('rec-stop').click()
    await expect.poll(() => page.getByTestId('rec-result').textContent(), { timeout: 10_000 }).toMatch(/Saved .*\.pcap: [\d,]+ packets/)
    const row = page.locator('[data-testid="rec-files"] tbody tr').first()
    await expect.poll(async () => (await row.locator('td').first().textContent())?.trim(), { timeout: 10_000 }).toMatch(/\.pcap$/)
    const name = (await row.locator('td').first().textContent())?.trim() ?? ''
    expect(name).toMatch(/^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_lo\.pcap$/)
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: `Download ${name}` }).click()])
    expect(download.suggestedFilename()).toBe(name)
    const saved = join(resultsDir, 'downloads', name)
    await download.saveAs(saved)
    const head = readFileSync(saved).subarray(0, 4).toString('hex')
    expect(['d4c3b2a1', 'a1b2c3d4', '4d3cb2a1', 'a1b23c4d']).toContain(head)
  })

  test('creates a user and an API token; the audit log shows both and the chain verifies', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users', exact: true }).click()
    await page.getByLabel('Username', { exact: true }).fill('vera')
    await page.getByLabel('Password', { exact: true }).fill('vera-password-1')
    await page.getByLabel('Role', { exact: true }).selectOption('viewer')
    await page.getByRole('button', { name: 'Create user' }).click()
    await expect.poll(() => page.getByTestId('users-table').textContent()).toContain('vera')

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API tokens', exact: true }).click()
    await page.getByLabel('Name', { exact: true }).fill('e2e-scraper')
    await page.getByRole('button', { name: 'Create token' }).click()
    const token = await page.getByTestId('token-value').inputValue()
    expect(token).toMatch(/^bnt_/)
    await expect.poll(() => page.getByTestId('tokens-table').textContent()).toContain('e2e-scraper')
    const viaToken = await fetch(`${hub.url}/api/status`, { headers: { Authorization: `Bearer ${token}` } })
    expect(viaToken.status).toBe(200)

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log', exact: true }).click()
    await expect.poll(() => page.getByTestId('audit-table').textContent()).toContain('user.create')
    await expect.poll(() => page.getByTestId('audit-table').textContent()).toContain('token.create')
    await expect.poll(() => page.getByTestId('audit-table').textContent()).toContain('capture.start')
    await page.getByLabel('Action').fill('user.*')
    await page.getByRole('button', { name: 'Apply' }).click()
    await expect.poll(() => page.url()).toMatch(/action=user/)
    await expect.poll(() => page.getByTestId('audit-table').textContent()).not.toContain('token.create')
    await page.getByTestId('audit-verify').click()
    await expect.poll(() => page.getByTestId('audit-verify-result').textContent()).toMatch(/Chain intact: \d+ records checked/)
  })

  test('a viewer sees no admin pages and no capture or recording buttons', async () => {
    const v = await newWatchedContext(browser)
    try {
      await login(v.page, hub, 'vera', 'vera-password-1')
      await v.page.waitForURL(/\/live/)
      const nav = v.page.getByRole('navigation', { name: 'Main' })
      await expect.poll(() => nav.getByRole('link', { name: 'Live', exact: true }).count()).toBe(1)
      expect(await nav.getByRole('link', { name: 'Users', exact: true }).count()).toBe(0)
      expect(await nav.getByRole('link', { name: 'Audit log', exact: true }).count()).toBe(0)
      await expect.poll(() => v.page.getByTestId('live-stats').count()).toBe(1)
      expect(await v.page.getByTestId('capture-start').count()).toBe(0)
      expect(await v.page.getByTestId('capture-stop').count()).toBe(0)
      expect(await v.page.getByTestId('rec-start').count()).toBe(0)
      await v.page.goto(`${hub.url}/admin/users`)
      await v.page.waitForURL(/\/live\?denied=/)
      expect(v.watch.dialogs).toEqual([])
    } finally {
      await v.ctx.close()
    }
  })

  test('CSRF: the console is same-origin; a cookie POST from a foreign origin is refused', async () => {
    const foreign = await ctx.request.post(`${hub.url}/api/record/start`, { headers: { Origin: 'https://evil.example' } })
    expect(foreign.status()).toBe(403)
    expect(await foreign.text()).toContain('CSRF')
    const crossSite = await ctx.request.post(`${hub.url}/api/record/start`, { headers: { 'Sec-Fetch-Site': 'cross-site' } })
    expect(crossSite.status()).toBe(403)
    // the same request from the console itself (same origin) works
    const own = await page.evaluate(async () => (await fetch('/api/record/stop', { method: 'POST', credentials: 'same-origin' })).status)
    expect([200, 409]).toContain(own) // 409: not recording — the request was let through
  })

  test('the live view shows "disconnected — retrying" and reconnects', async () => {
    let block = true
    await page.routeWebSocket(/\/ws$/, (ws) => {
      if (block) ws.close({ code: 1011, reason: 'test drop' })
      else ws.connectToServer()
    })
    await page.goto(`${hub.url}/live`)
    await expect.poll(() => page.getByTestId('ws-banner').count(), { timeout: 15_000 }).toBe(1)
    expect(await page.getByTestId('ws-banner').textContent()).toContain('Disconnected from the hub — retrying')
    await screenshot(page, 'live-disconnected-light')
    block = false
    await page.getByRole('button', { name: 'Retry now' }).click()
    await expect.poll(() => page.getByTestId('ws-state').textContent(), { timeout: 15_000 }).toContain('Connected')
    expect(await page.getByTestId('ws-banner').count()).toBe(0)
    await page.unrouteAll({ behavior: 'ignoreErrors' })
  })

  test('screenshots of every page in both themes', async () => {
    const pages: [string, string][] = [
      ['live', '/live'],
      ['history', '/history?range=1h'],
      ['compare', '/compare'],
      ['agents', '/agents'],
      ['flows', '/flows'],
      ['flows-filtered', '/flows?addr=127.0.0.1&proto=17'],
      ['host', '/hosts/127.0.0.5'],
      ['syslog', '/syslog'],
      ['users', '/admin/users'],
      ['tokens', '/admin/tokens'],
      ['enroll-tokens', '/admin/enroll-tokens'],
      ['audit', '/admin/audit'],
      ['about', '/about'],
    ]
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(page, theme)
      for (const [name, path] of pages) {
        await page.goto(`${hub.url}${path}`)
        await page.waitForLoadState('networkidle').catch(() => undefined)
        await sleep(name === 'live' ? 2000 : 600)
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme)
        await screenshot(page, `${name}-${theme}`)
      }
      const anon = await newWatchedContext(browser, theme)
      await anon.page.goto(`${hub.url}/login`)
      await anon.page.getByLabel('Password', { exact: true }).waitFor()
      await screenshot(anon.page, `login-${theme}`)
      await anon.ctx.close()
    }
    // the shared history link keeps its range
    await page.goto(`${hub.url}/history?range=24h`)
    await expect.poll(() => page.getByRole('heading', { name: /Traffic, last 24h/ }).count()).toBe(1)
  })

  test('on a phone (390 px) Live, History and a host page fit the width', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, storageState: await ctx.storageState() })
    try {
      const p = await phone.newPage()
      for (const [name, path] of [
        ['phone-live', '/live'],
        ['phone-history', '/history'],
        ['phone-host', '/hosts/127.0.0.5'],
      ]) {
        await p.goto(`${hub.url}${path}`)
        await p.waitForLoadState('networkidle').catch(() => undefined)
        await sleep(1000)
        expect(await p.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(390)
        await screenshot(p, name)
      }
    } finally {
      await phone.close()
    }
  })

  test('no dialog, CSP violation or page error happened', async () => {
    traffic = false
    expect(watch.dialogs).toEqual([])
    expect(watch.pageErrors).toEqual([])
    expect(watch.cspViolations).toEqual([])
    expect(await pageCsp(page)).toEqual([])
  })
})
