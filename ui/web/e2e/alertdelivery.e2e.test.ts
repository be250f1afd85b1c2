// Admin → Alert delivery (issue 19): a routing rule is edited in place in
// real Chromium against a real hub. The PUT keeps the rule's id and its
// position; the other rule is untouched; Cancel leaves the rule as it
// was; a hostile kind is shown as text.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, pageCsp, startHub, type Hub, type Watch } from './hub'

interface Route {
  id: string
  min_severity: number
  kinds: string[] | null
  sites: string[] | null
  channels: string[] | null
  continue: boolean
}

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch

async function routes(): Promise<Route[]> {
  const r = await ctx.request.get(`${hub.url}/api/v1/alerts/routes`)
  expect(r.status()).toBe(200)
  return (await r.json()) as Route[]
}

beforeAll(async () => {
  hub = await startHub()
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await login(page, hub)
  const own = { headers: { Origin: hub.url } }
  for (const data of [
    { min_severity: 5, kinds: ['port'], sites: [], channels: ['generic_url'], continue: true },
    { min_severity: 0, kinds: [], sites: ['paris'], channels: ['email'], continue: false },
  ]) {
    expect((await ctx.request.post(`${hub.url}/api/v1/alerts/routes`, { ...own, data })).status()).toBe(200)
  }
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('alert delivery', () => {
  test('a routing rule is edited in place', async () => {
    const before = await routes()
    expect(before.map((r) => r.id)).toEqual(['1', '2'])
    await page.goto(`${hub.url}/admin/alert-delivery`)
    const table = page.getByTestId('routes-table')
    await expect.poll(() => table.locator('tbody tr').count()).toBe(2)

    // Cancel: nothing changes.
    await page.getByRole('button', { name: 'Edit rule 1' }).click()
    expect(await page.locator('#rt-sev').inputValue()).toBe('5')
    expect(await page.locator('#rt-kinds').inputValue()).toBe('port')
    await page.locator('#rt-sev').fill('9')
    await page.getByRole('button', { name: 'Cancel' }).click()
    expect(await page.locator('#rt-sev').inputValue()).toBe('0')
    expect(await page.getByRole('button', { name: 'Add rule' }).count()).toBe(1)
    expect(await routes()).toEqual(before)

    // Edit and save.
    await page.getByRole('button', { name: 'Edit rule 1' }).click()
    await page.locator('#rt-sev').fill('7')
    await page.locator('#rt-kinds').fill('port, <img src=x onerror=alert(1)>')
    await page.locator('#rt-sites').fill('lyon')
    const form = page.getByTestId('route-form')
    await form.getByLabel('generic_url').uncheck()
    await form.getByLabel('chatapp1').check()
    await form.getByLabel('continue').uncheck()
    await page.getByRole('button', { name: 'Save rule 1' }).click()
    await expect.poll(async () => (await routes())[0].min_severity).toBe(7)
    const after = await routes()
    expect(after).toEqual([
      { id: '1', min_severity: 7, kinds: ['port', '<img src=x onerror=alert(1)>'], sites: ['lyon'], channels: ['chatapp1'], continue: false },
      before[1],
    ])
    // The table shows the change, as text; the form is back to adding.
    await expect.poll(() => table.locator('tbody tr').first().innerText()).toContain('<img src=x onerror=alert(1)>')
    const first = await table.locator('tbody tr').first().locator('td').allInnerTexts()
    expect(first.slice(0, 6)).toEqual(['1', '7', 'port, <img src=x onerror=alert(1)>', 'lyon', 'chatapp1', 'no'])
    expect(await page.getByRole('button', { name: 'Add rule' }).count()).toBe(1)
    expect(await page.locator('img[src="x"]').count()).toBe(0)
    expect(watch.dialogs).toEqual([])
    expect(watch.pageErrors).toEqual([])
    expect(await pageCsp(page)).toEqual([])
  })
})
