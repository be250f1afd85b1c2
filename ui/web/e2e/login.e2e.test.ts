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
    // A bearer client signed in with the bootstrap password (no cookie in
    // the browser) creates a viewer: RBAC users exist, but with no admin
    // the bootstrap password still works, so the form still offers it.
    const api = async (path: string, body: unknown, token = ''): Promise<Response> =>
      fetch(`${rbac.url}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      })
    const boot = await api('/api/login', { password: rbac.password })
    expect(boot.status).toBe(200)
    const { token } = (await boot.json()) as { token: string }
    expect((await api('/api/v1/users', { username: 'vic', password: 'vic-password-1', role: 'viewer' }, token)).status).toBe(200)

    await page.goto(`${rbac.url}/login`)
    await expect.poll(() => page.getByTestId('bootstrap-hint').count()).toBe(1)
    // An admin is created while the form is open: from now on the hub
    // refuses the bootstrap password, with its own message.
    expect((await api('/api/v1/users', { username: 'ada', password: 'ada-password-1', role: 'admin' }, token)).status).toBe(200)
    await page.getByLabel('Password', { exact: true }).fill(rbac.password)
    await page.locator('form button[type=submit]').click()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The bootstrap password is disabled because RBAC users exist')
    expect(await page.getByRole('alert').textContent()).not.toMatch(/wrong/i)
    expect(await page.getByTestId('bootstrap-hint').count()).toBe(0)
    await screenshot(page, 'login-rbac-light')
    // a later visit does not suggest it either: the hub's status says the
    // bootstrap password is off, even in a browser that never tried it
    await page.reload()
    await page.getByLabel('Password', { exact: true }).waitFor()
    expect(await page.getByTestId('bootstrap-hint').count()).toBe(0)
    const fresh = await browser.newContext()
    try {
      const p2 = await fresh.newPage()
      await p2.goto(`${rbac.url}/login`)
      await p2.getByLabel('Password', { exact: true }).waitFor()
      await expect.poll(async () => (await p2.evaluate(() => fetch('/api/auth/status').then((r) => r.json()))).bootstrap_password).toBe(false)
      expect(await p2.getByTestId('bootstrap-hint').count()).toBe(0)
    } finally {
      await fresh.close()
    }

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
    await expect.poll(() => role.inputValue()).toBe('viewer')
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
