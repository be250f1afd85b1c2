// Sign-in page against a real hub: no SSO button without OIDC, the 401
// message, and the 429 throttle message with the wait from Retry-After.
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Browser } from 'playwright-core'
import { launchBrowser, newWatchedContext, screenshot, startHub, type Hub } from './hub'

let hub: Hub
let browser: Browser

beforeAll(async () => {
  hub = await startHub()
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await hub?.stop()
})

test('wrong passwords: 401 message, then the throttle (429) with its wait time', async () => {
  const { ctx, page, watch } = await newWatchedContext(browser)
  try {
    await page.goto(`${hub.url}/`)
    await page.waitForURL(/\/login/)
    expect(await page.getByRole('link', { name: /single sign-on/ }).count()).toBe(0)
    await page.getByLabel('Username').fill('nobody')
    await page.getByLabel('Password', { exact: true }).fill('wrong-password')
    const submit = page.locator('form button[type=submit]')
    await submit.click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong username or password')
    let text = ''
    for (let i = 0; i < 8 && !text.includes('Too many'); i++) {
      await expect.poll(() => submit.isEnabled()).toBe(true)
      await submit.click()
      await expect.poll(async () => (await page.getByRole('alert').textContent()) ?? '').toMatch(/Wrong|Too many/)
      text = (await page.getByRole('alert').textContent()) ?? ''
    }
    expect(text).toMatch(/Too many failed sign-ins from this address\. Try again in 60 s\./)
    await expect.poll(() => submit.textContent()).toMatch(/Wait \d+ s/)
    expect(await submit.isDisabled()).toBe(true)
    await screenshot(page, 'login-throttled-light')
    expect(watch.dialogs).toEqual([])
    expect(watch.pageErrors).toEqual([])
  } finally {
    await ctx.close()
  }
})

test('authentication off on the network: every page carries a banner; on 127.0.0.1 only it does not', async () => {
  const open = await startHub({ password: '' })
  const local = await startHub({ password: '', extraArgs: ['-listen', '127.0.0.1'] })
  try {
    for (const [h, want] of [
      [open, true],
      [local, false],
    ] as const) {
      const { ctx, page, watch } = await newWatchedContext(browser)
      try {
        await page.goto(`${h.url}/live`)
        await expect.poll(() => page.locator('.topbar').count()).toBe(1)
        const banner = page.locator('[data-test=auth-off-banner]')
        if (want) {
          await expect.poll(() => banner.textContent()).toContain('anyone who can reach it is admin')
          await screenshot(page, 'auth-off-banner-light')
        } else {
          expect(await banner.count()).toBe(0)
        }
        expect(watch.pageErrors).toEqual([])
      } finally {
        await ctx.close()
      }
    }
  } finally {
    await open.stop()
    await local.stop()
  }
})
