// Compare for a browser in another zone than the hub (issue 28 item 16):
// a hub on UTC, Chromium on Europe/Paris. Each hour is drawn at its own
// time (the hub's hour 0 is 01:00 or 02:00 in Paris, not 00:00), an hour
// without data is a gap rather than 0 bit/s, and a day without data says
// "no data" instead of "0 bit/s".
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, screenshot, startHub, type Hub } from './hub'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
const pageErrors: string[] = []

const todayUTC = Math.floor(Date.now() / 86_400_000) * 86_400
// 7 500 bytes/s over 60 s: 60 kbit/s
const row = (ts: number) => `INSERT INTO traffic_minutes (ts, in_bytes, out_bytes, peak_in, peak_out, seconds) VALUES (${ts}, 450000, 45000, 7500, 750, 60);`

/** hh:mm:ss of a Unix time in Paris (the legend's cursor label). */
const paris = (ts: number) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(ts * 1000)

beforeAll(async () => {
  hub = await startHub({ env: { TZ: 'UTC' } })
  // Data the hub's capture would have written: today 00:00-00:01 UTC and
  // yesterday 10:00-10:01 UTC; nothing on the five days before.
  await hub.pause()
  execFileSync('sqlite3', [join(hub.dir, 'netmon.db'), row(todayUTC) + row(todayUTC - 86_400 + 10 * 3600)])
  await hub.resume()
  browser = await launchBrowser()
  ctx = await browser.newContext({ viewport: { width: 1280, height: 720 }, timezoneId: 'Europe/Paris' })
  page = await ctx.newPage()
  page.on('pageerror', (e) => pageErrors.push(String(e)))
  await login(page, hub)
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

/** The legend with the cursor at hour i of the chart: its header and rows. */
async function legendAt(i: number): Promise<{ head: string; rows: string[][] }> {
  const chart = page.getByTestId('compare-chart')
  const over = chart.locator('.u-over')
  const box = (await over.boundingBox())!
  await page.mouse.move(box.x + Math.min(box.width - 1, Math.max(1, (box.width * i) / 23)), box.y + box.height / 2)
  const legend = chart.getByTestId('chart-legend')
  const head = (await legend.locator('thead th').nth(1).textContent()) ?? ''
  const rows = await legend.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).slice(0, 2).map((td) => (td.textContent ?? '').trim())))
  return { head, rows }
}

describe('compare in Europe/Paris against a UTC hub', () => {
  test('days without data say "no data"', async () => {
    await page.goto(`${hub.url}/compare?days=7`)
    const days = page.getByTestId('compare-days').locator('tbody tr')
    await expect.poll(() => days.count(), { timeout: 15_000 }).toBe(7)
    const cells = await days.evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => (td.textContent ?? '').trim())))
    // newest first: today and yesterday have data, five days have none
    expect(cells[0]!.slice(1, 2)).toEqual(['60.0 kbit/s'])
    expect(cells[1]!.slice(1, 2)).toEqual(['60.0 kbit/s'])
    for (const c of cells.slice(2)) expect(c.slice(1)).toEqual(['no data', '0'])
    expect(await page.getByText('0 bit/s').count()).toBe(0)
    // the day's label is the hub's date, not the evening before
    expect(cells[0]![0]).toContain(String(new Date(todayUTC * 1000).getUTCDate()))
  })

  test('hours are drawn at their own time; an hour without data is a gap', async () => {
    await page.goto(`${hub.url}/compare?days=7`)
    await page.getByTestId('compare-chart').locator('canvas').waitFor()
    // the hub's hour 0 (UTC) is 01:00 (02:00 in summer) in Paris
    const first = await legendAt(0)
    expect(first.head).toBe(`At ${paris(todayUTC)}`)
    expect(first.rows.find((r) => r[0]!.startsWith('Today in'))?.[1]).toBe('60.0 kbit/s')
    expect(first.rows.find((r) => r[0]!.startsWith('Yesterday in'))?.[1]).toBe('–')
    // yesterday's 10:00 UTC lines up with today's 10:00 UTC
    const ten = await legendAt(10)
    expect(ten.head).toBe(`At ${paris(todayUTC + 10 * 3600)}`)
    expect(ten.rows.find((r) => r[0]!.startsWith('Yesterday in'))?.[1]).toBe('60.0 kbit/s')
    // an hour without data: no value, not 0 bit/s
    const five = await legendAt(5)
    expect(five.rows.find((r) => r[0]!.startsWith('Yesterday in'))?.[1]).toBe('–')
    expect(pageErrors).toEqual([])
    await screenshot(page, 'compare-paris')
  })
})
