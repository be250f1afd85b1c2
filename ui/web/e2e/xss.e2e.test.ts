// RELIABILITY case 29: hostile strings fed to a real hub — a DNS name that
// is an <img onerror> tag and a hostname with an RTL override (DNS packets
// over lo with the capture running), syslog lines carrying <script> (UDP to
// -syslog-port), an API token named like markup — must show literally in
// Chromium on every page that shows them (the host page too), and no script runs.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { dnsMessage, launchBrowser, login, newWatchedContext, pageCsp, screenshot, sendUdp, sleep, startHub, type Hub, type Watch } from './hub'

const IMG_NAME = '<img src=x onerror=alert(1)>.evil.test'
const RTL_NAME = '\u202Egnp.exe.evil.test'
const SCRIPT_MSG = '<script>window.__xss=1</script> and <img src=x onerror="window.__xss=2"> done'
const SCRIPT_TAG = '<svg onload=alert(3)>'
const TOKEN_NAME = '<img src=x onerror=alert(4)>'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let feeding = true

/** Repeats the hostile DNS traffic so the live snapshot keeps it. */
async function feed(): Promise<void> {
  let id = 1
  while (feeding) {
    await sendUdp(53, [
      dnsMessage(id++, IMG_NAME),
      dnsMessage(id++, IMG_NAME, ['127.0.0.7']),
      dnsMessage(id++, RTL_NAME, ['127.0.0.8']),
    ]).catch(() => undefined)
    // traffic with the named addresses makes them endpoints of the capture
    await sendUdp(9, [Buffer.from('x')], '127.0.0.7').catch(() => undefined)
    await sendUdp(9, [Buffer.from('y'.repeat(400))], '127.0.0.8').catch(() => undefined)
    await sleep(300)
  }
}

async function assertNoScriptRan(p: Page, w: Watch): Promise<void> {
  expect(await p.evaluate(() => (window as unknown as { __xss?: unknown }).__xss)).toBeUndefined()
  expect(w.dialogs).toEqual([])
  // no element was created from the hostile markup
  expect(await p.locator('img[src="x"], svg[onload], script:not([src])').count()).toBe(0)
}

beforeAll(async () => {
  hub = await startHub()
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await login(page, hub)
  const own = { headers: { Origin: hub.url } }
  const started = await ctx.request.post(`${hub.url}/api/capture/start`, { ...own, data: { device: 'lo' } })
  expect(await started.json()).toEqual({ ok: true })
  void feed()
  const rfc3164 = (tag: string, msg: string) => Buffer.from(`<11>Nov 21 12:00:00 evilhost ${tag}: ${msg}`)
  await sendUdp(hub.syslogPort, [rfc3164('app', SCRIPT_MSG), rfc3164(SCRIPT_TAG, 'tag test'), rfc3164('rtl', `file ${RTL_NAME}`)])
  const tok = await ctx.request.post(`${hub.url}/api/v1/tokens`, { ...own, data: { name: TOKEN_NAME, role: 'viewer' } })
  expect(tok.status()).toBe(200)
})

afterAll(async () => {
  feeding = false
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('hostile strings are shown literally', () => {
  test('live: DNS names and endpoint hostnames', async () => {
    await page.goto(`${hub.url}/live`)
    const domains = page.getByTestId('domains-table')
    await expect.poll(() => domains.textContent(), { timeout: 20_000 }).toContain(IMG_NAME)
    const endpoints = page.getByTestId('endpoints-table')
    await expect.poll(() => endpoints.textContent(), { timeout: 20_000 }).toContain(IMG_NAME)
    // the RTL override is shown as a visible marker, the rest in logical order
    await expect.poll(() => endpoints.textContent(), { timeout: 20_000 }).toContain('U+202Egnp.exe.evil.test')
    await expect.poll(() => domains.textContent()).toContain('U+202Egnp.exe.evil.test')
    // the raw value stays available on hover
    const titles = await endpoints.locator('bdi.safe').evaluateAll((els) => els.map((e) => e.getAttribute('title')))
    expect(titles).toContain(RTL_NAME)
    await assertNoScriptRan(page, watch)
    await screenshot(page, 'xss-live')
  })

  test('live: the endpoint bars link each address to its host page, which shows the name literally', async () => {
    const bars = page.getByTestId('endpoint-chart')
    await bars.scrollIntoViewIfNeeded()
    const link = bars.locator('a[href="/hosts/127.0.0.7"]')
    await expect.poll(() => link.count(), { timeout: 20_000 }).toBe(1)
    await link.click()
    await page.waitForURL(/\/hosts\/127\.0\.0\.7$/)
    const details = page.getByTestId('host-details')
    await expect.poll(() => details.textContent(), { timeout: 15_000 }).toContain(IMG_NAME)
    expect(await details.locator('img').count()).toBe(0)
    await screenshot(page, 'xss-host')
    await assertNoScriptRan(page, watch)
  })

  test('syslog: message and tag', async () => {
    await page.goto(`${hub.url}/syslog`)
    const table = page.getByTestId('syslog-table')
    await expect.poll(() => table.textContent(), { timeout: 15_000 }).toContain(SCRIPT_MSG)
    await expect.poll(() => table.textContent()).toContain('U+202Egnp.exe.evil.test')
    const text = (await table.textContent()) ?? ''
    // the tag is parsed by the hub; whatever part of it arrives is literal
    expect(text.includes(SCRIPT_TAG) || text.includes('<svg')).toBe(true)
    await assertNoScriptRan(page, watch)
    await screenshot(page, 'xss-syslog')
  })

  test('API tokens and the audit log: a token named like markup', async () => {
    await page.goto(`${hub.url}/admin/tokens`)
    await expect.poll(() => page.getByTestId('tokens-table').textContent()).toContain(TOKEN_NAME)
    await assertNoScriptRan(page, watch)
    await page.goto(`${hub.url}/admin/audit`)
    await expect.poll(() => page.getByTestId('audit-table').textContent()).toContain('token.create')
    await assertNoScriptRan(page, watch)
    await screenshot(page, 'xss-audit')
  })

  test('no CSP violation and no page error', async () => {
    expect(watch.pageErrors).toEqual([])
    expect(watch.cspViolations).toEqual([])
    expect(await pageCsp(page)).toEqual([])
  })
})
