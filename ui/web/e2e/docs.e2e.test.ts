// The manual served by the hub at /docs/ (issue 30): the index lists every
// page, a link reaches a heading, the search finds headings as you type,
// every page renders without a script error or CSP violation, the theme
// follows the console's choice, and a hub started with -dev serves it too.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, pageCsp, screenshot, startHub, type Hub, type Watch } from './hub'

type IndexPage = { slug: string; number: number; title: string; headings: { level: number; text: string; id: string }[] }

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let index: IndexPage[]

beforeAll(async () => {
  hub = await startHub()
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  index = (await (await ctx.request.get(`${hub.url}/docs/index.json`)).json()) as IndexPage[]
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('manual', () => {
  test('the index lists every page in order', async () => {
    expect(index.length).toBeGreaterThanOrEqual(15)
    await page.goto(`${hub.url}/docs/`)
    const toc = await page.locator('main ol.toc li a').allTextContents()
    expect(toc).toEqual(index.map((p) => p.title))
    await screenshot(page, 'docs-index')
  })

  test('a link reaches a heading', async () => {
    await page.goto(`${hub.url}/docs/`)
    await page.locator('nav.side').getByRole('link', { name: 'Security model' }).click()
    await page.waitForURL(`${hub.url}/docs/11-security`)
    await page.locator('nav.side').getByRole('link', { name: 'Slow and silent clients' }).click()
    await page.waitForURL(`${hub.url}/docs/11-security#slow-and-silent-clients`)
    const heading = page.locator('#slow-and-silent-clients')
    await expect.poll(() => heading.textContent()).toContain('Slow and silent clients')
    // the heading is scrolled to the top of the page, below the sticky bar
    const top = await heading.evaluate((el) => el.getBoundingClientRect().top)
    expect(top).toBeGreaterThanOrEqual(0)
    expect(top).toBeLessThan(200)
  })

  test('the search finds headings as you type and leads to them', async () => {
    await page.goto(`${hub.url}/docs/`)
    await page.getByLabel('Search the manual').fill('slow clients')
    const hit = page.locator('#docs-hits a', { hasText: 'Slow and silent clients' })
    await expect.poll(() => hit.count()).toBe(1)
    expect(await hit.textContent()).toBe('Slow and silent clients in Security model')
    await hit.click()
    await page.waitForURL(`${hub.url}/docs/11-security#slow-and-silent-clients`)
    // without script the form asks the server: same result
    await page.goto(`${hub.url}/docs/?q=slow+clients`)
    expect(await page.locator('main ul.results a').allTextContents()).toEqual(['Slow and silent clients'])
  })

  test('every page renders: its title, its headings, no script error, no CSP violation', async () => {
    for (const p of index) {
      const res = await page.goto(`${hub.url}/docs/${p.slug}`)
      expect(res?.status(), p.slug).toBe(200)
      expect(await page.locator('main h1').first().textContent(), p.slug).toBe(p.title)
      for (const h of p.headings) {
        expect(await page.locator(`main [id="${h.id}"]`).count(), `${p.slug}#${h.id}`).toBe(1)
      }
      expect(await pageCsp(page), p.slug).toEqual([])
    }
    expect(watch.pageErrors).toEqual([])
    expect(watch.cspViolations).toEqual([])
  })

  test('the theme follows the console choice and the button cycles it', async () => {
    await page.goto(`${hub.url}/docs/01-install`)
    await page.evaluate(() => localStorage.setItem('netmon.theme', 'dark'))
    await page.reload()
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark')
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor)
    expect(bg).toBe('rgb(13, 17, 23)')
    await screenshot(page, 'docs-dark')
    await page.getByRole('button', { name: 'Theme: dark' }).click()
    expect(await page.evaluate(() => localStorage.getItem('netmon.theme'))).toBe('system')
    expect(await page.evaluate(() => document.documentElement.dataset.theme ?? '')).toBe('')
  })
})

describe('console help menu', () => {
  test('links every page of the manual, and a link opens it', async () => {
    await login(page, hub)
    await page.getByText('Help', { exact: true }).click()
    const menu = page.getByTestId('help-menu')
    await expect.poll(() => menu.locator('a[data-testid^="help-"]').count()).toBe(index.length)
    const hrefs = await menu.locator('a[data-testid^="help-"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')))
    expect(hrefs).toEqual(index.map((p) => `/docs/${p.slug}`))
    await screenshot(page, 'docs-help-menu')
    await menu.getByRole('menuitem', { name: 'Troubleshooting' }).click()
    await page.waitForURL(`${hub.url}/docs/15-troubleshooting`)
    expect(await page.locator('main h1').first().textContent()).toBe('Troubleshooting')
  })
})

describe('manual on a -dev hub', () => {
  test('is served although the console is not', async () => {
    const dev = await startHub({ extraArgs: ['-dev'] })
    try {
      const docs = await ctx.request.get(`${dev.url}/docs/02-quick-start`)
      expect(docs.status()).toBe(200)
      expect(await docs.text()).toContain('<title>Quick start — netmon manual</title>')
      const shell = await ctx.request.get(`${dev.url}/agents`)
      expect(shell.status()).toBe(404)
    } finally {
      await dev.stop()
    }
  })
})
