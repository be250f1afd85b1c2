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

test('RBAC users exist: the bootstrap password is refused with its own message, the form stops suggesting it; admins confirm role changes and cannot disable or delete themselves', async () => {
  const rbac = await startHub()
  const { ctx, page, watch } = await newWatchedContext(browser)
  try {
    // the bootstrap session creates a viewer, then an admin: RBAC is on
    // (and the bootstrap session ends with it)
    const own = { headers: { Origin: rbac.url } }
    expect((await ctx.request.post(`${rbac.url}/api/login`, { ...own, data: { password: rbac.password } })).status()).toBe(200)
    for (const [username, role] of [
      ['vic', 'viewer'],
      ['ada', 'admin'],
    ]) {
      const r = await ctx.request.post(`${rbac.url}/api/v1/users`, { ...own, data: { username, password: `${username}-password-1`, role } })
      expect(r.status(), username).toBe(200)
    }
    await ctx.request.post(`${rbac.url}/api/logout`, own)
    await ctx.clearCookies()

    await page.goto(`${rbac.url}/login`)
    await expect.poll(() => page.getByTestId('bootstrap-hint').count()).toBe(1)
    await page.getByLabel('Password', { exact: true }).fill(rbac.password)
    await page.locator('form button[type=submit]').click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The bootstrap password is disabled because RBAC users exist')
    expect(await page.getByRole('alert').textContent()).not.toMatch(/wrong/i)
    expect(await page.getByTestId('bootstrap-hint').count()).toBe(0)
    await screenshot(page, 'login-rbac-light')
    // a later visit does not suggest it either
    await page.reload()
    await page.getByLabel('Password', { exact: true }).waitFor()
    expect(await page.getByTestId('bootstrap-hint').count()).toBe(0)

    await page.getByLabel('Username').fill('ada')
    await page.getByLabel('Password', { exact: true }).fill('ada-password-1')
    await page.locator('form button[type=submit]').click()
    await page.waitForURL(/\/live/)
    await page.goto(`${rbac.url}/admin/users`)
    const table = page.getByTestId('users-table')
    const mine = table.locator('tbody tr', { hasText: 'ada' })
    const other = table.locator('tbody tr', { hasText: 'vic' })
    await expect.poll(() => other.count()).toBe(1)
    expect(await mine.getByRole('button', { name: 'Disable' }).count()).toBe(0)
    expect(await mine.getByRole('button', { name: 'Delete' }).count()).toBe(0)
    expect(await other.getByRole('button', { name: 'Disable' }).count()).toBe(1)
    expect(await other.getByRole('button', { name: 'Delete' }).count()).toBe(1)
    // a role change asks first; cancel puts the select back
    const role = other.getByLabel('Role of vic')
    await role.selectOption('netops')
    const dialog = page.getByRole('dialog', { name: "Change this user's role?" })
    await expect.poll(() => dialog.isVisible()).toBe(true)
    expect(await dialog.textContent()).toMatch(/vic goes from viewer to netops/)
    await screenshot(page, 'users-confirm-role-light')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    expect(await role.inputValue()).toBe('viewer')
    const listed = async () => ((await (await ctx.request.get(`${rbac.url}/api/v1/users`)).json()) as { username: string; role: string }[]).find((u) => u.username === 'vic')?.role
    expect(await listed()).toBe('viewer')
    await role.selectOption('netops')
    await dialog.getByRole('button', { name: 'Change role' }).click()
    await expect.poll(listed).toBe('netops')
    await expect.poll(() => page.locator('.notice-ok').textContent()).toContain('vic is now netops')
    expect(watch.dialogs).toEqual([])
    expect(watch.pageErrors).toEqual([])
  } finally {
    await ctx.close()
    await rbac.stop()
  }
})
