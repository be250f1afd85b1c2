// Syslog filters run in the hub (issue 28 item 16): an old critical line
// behind 1 200 newer info lines is found by the severity filter (the
// console filtered the newest 100-1000 lines in the browser and lost it),
// host and text filters reach the hub, and "Older messages" pages back
// with the hub's cursor until the end.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, screenshot, sendUdp, sleep, startHub, type Hub, type Watch } from './hub'

const INFO = 1200
let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch

const line = (pri: number, host: string, tag: string, msg: string) => Buffer.from(`<${pri}>Nov 21 12:00:00 ${host} ${tag}: ${msg}`)

/** Every stored message, over the hub's cursor. */
async function stored(): Promise<number> {
  let n = 0
  let before = 0
  for (;;) {
    const r = await ctx.request.get(`${hub.url}/api/v1/syslog?limit=1000${before ? `&before=${before}` : ''}`)
    const rows = (await r.json()) as { id: number }[]
    n += rows.length
    if (rows.length < 1000) return n
    before = rows[rows.length - 1].id
  }
}

beforeAll(async () => {
  hub = await startHub()
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await login(page, hub)
  // local0.crit = 16*8+2, local0.info = 16*8+6
  await sendUdp(hub.syslogPort, [line(130, 'fw1', 'kernel', 'CRIT disk failure on sda')])
  await sleep(200)
  for (let i = 0; i < INFO; i += 50) {
    const batch = Array.from({ length: 50 }, (_, j) => line(134, 'sw2', 'cron', `routine tick ${i + j}`))
    await sendUdp(hub.syslogPort, batch)
    await sleep(20)
  }
  const deadline = Date.now() + 30_000
  let n = 0
  while ((n = await stored()) < INFO + 1 && Date.now() < deadline) await sleep(500)
  if (n !== INFO + 1) throw new Error(`the hub stored ${n} syslog messages, want ${INFO + 1}`)
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('syslog filters in the hub', () => {
  test('severity: the old critical line behind 1 200 newer info lines is shown', async () => {
    await page.goto(`${hub.url}/syslog`)
    const table = page.getByTestId('syslog-table')
    await expect.poll(() => table.locator('tbody tr').count(), { timeout: 15_000 }).toBe(25) // a page of the newest 100
    await page.getByLabel('Severity').selectOption('2')
    await expect.poll(() => table.locator('tbody tr').allTextContents(), { timeout: 15_000 }).toEqual([expect.stringContaining('CRIT disk failure on sda')])
    expect(new URL(page.url()).searchParams.get('severity')).toBe('2')
    await expect.poll(() => page.getByTestId('syslog-end').isVisible()).toBe(true)
    await screenshot(page, 'syslog-severity')
  })

  test('host and text filters reach the hub; Older pages back to the end', async () => {
    await page.goto(`${hub.url}/syslog`)
    const table = page.getByTestId('syslog-table')
    await page.getByLabel('Host').fill('FW1')
    await page.getByRole('button', { name: 'Apply' }).click()
    await expect.poll(() => table.locator('tbody tr').allTextContents(), { timeout: 15_000 }).toEqual([expect.stringContaining('CRIT disk failure on sda')])

    await page.getByRole('button', { name: 'Clear' }).click()
    // "tick 7": 7, 70-79 and 700-799: 111 messages, over two pages of 100
    await page.getByLabel('Message contains').fill('tick 7')
    await page.getByRole('button', { name: 'Apply' }).click()
    const pager = page.getByRole('navigation', { name: 'Syslog pages' })
    await expect.poll(() => pager.textContent(), { timeout: 15_000 }).toContain('1–25 of 100')
    await page.getByTestId('syslog-older').click()
    await expect.poll(() => pager.textContent(), { timeout: 15_000 }).toContain('1–25 of 111')
    await expect.poll(() => page.getByTestId('syslog-end').isVisible()).toBe(true)
    expect(await page.getByTestId('syslog-older').count()).toBe(0)
    expect(watch.pageErrors).toEqual([])
  })
})
