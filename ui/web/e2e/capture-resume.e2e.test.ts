// The hub's capture survives a hub restart (issue 28 item 16): started on
// lo from the Live page, it runs on lo again after the hub restarts, and
// the picker shows lo (it used to come back stopped, the picker proposing
// the first interface, the management one); stopped by hand, it stays
// stopped after a restart and the page says so.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, startHub, type Hub, type Watch } from './hub'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch

beforeAll(async () => {
  hub = await startHub()
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

const state = () => page.getByTestId('capture-state')

describe('capture across a hub restart', () => {
  test('a running capture resumes on its interface; one stopped by hand stays stopped', async () => {
    await login(page, hub)
    await page.goto(`${hub.url}/live`)
    // nothing to resume: no interface proposed (the first one is usually
    // the management interface), Start waits for a choice (issue 28 item 16)
    await expect.poll(() => page.getByLabel('Interface').locator('option').count(), { timeout: 10_000 }).toBeGreaterThan(1)
    expect(await page.getByLabel('Interface').inputValue()).toBe('')
    expect(await page.getByTestId('capture-start').isDisabled()).toBe(true)
    await page.getByLabel('Interface').selectOption('lo')
    await page.getByTestId('capture-start').click()
    await expect.poll(() => state().textContent(), { timeout: 15_000 }).toContain('Capturing on lo')

    // sessions are in memory: the restart signs out
    await hub.restart()
    await login(page, hub)
    await page.goto(`${hub.url}/live`)
    await expect.poll(() => state().textContent(), { timeout: 15_000 }).toContain('Capturing on lo')
    expect(await page.getByLabel('Interface').inputValue()).toBe('lo')

    await page.getByTestId('capture-stop').click()
    await expect.poll(() => state().textContent(), { timeout: 15_000 }).toContain('Capture stopped')
    await hub.restart()
    await login(page, hub)
    await page.goto(`${hub.url}/live`)
    await expect.poll(() => state().textContent(), { timeout: 15_000 }).toContain('Capture stopped')
    expect(watch.pageErrors).toEqual([])
  })
})
