// The Reports page (issue 31) in real Chromium against a real hub
// (SQLite): a traffic report previewed in a sandboxed frame with the
// SHA-256 the hub sent; the PDF downloaded under the hub's file name; a
// schedule with a spec that does not parse refused with the message at
// the spec field (nothing stored), a good one listed, run now into the
// archive with the same SHA-256 the API lists; an SLA target added and
// shown with the status the API measures; a viewer sees the compliance
// report and the SLA list only.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, screenshot, startHub, type Hub, type Watch } from './hub'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
const own = () => ({ headers: { Origin: hub.url } })

interface ArchiveEntry {
  id: number
  schedule_id?: number
  type: string
  sha256: string
  filename: string
}
interface Schedule {
  id: number
  name: string
}
interface SLAStatus {
  target: { id: number; name: string }
  met: boolean
  no_data: boolean
}

async function apiJSON<T>(path: string): Promise<T> {
  const r = await ctx.request.get(`${hub.url}${path}`)
  expect(r.status(), await r.text()).toBe(200)
  return (await r.json()) as T
}

beforeAll(async () => {
  hub = await startHub()
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await login(page, hub)
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await hub?.stop()
})

describe('reports page', () => {
  test('the menu leads to Reports; a traffic preview shows the report and its SHA-256', async () => {
    await page.goto(`${hub.url}/live`)
    // the Live page's Report button opens a traffic report
    await page.getByTestId('live-report-link').click()
    await page.waitForURL(/\/reports\?type=traffic$/)
    expect(await page.locator('#rep-type').inputValue()).toBe('traffic')
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reports', exact: true }).click()
    await page.waitForURL(/\/reports$/)
    await page.locator('#rep-type').selectOption('traffic')
    await page.locator('#rep-days').fill('7')
    const answer = page.waitForResponse((r) => r.url().includes('/api/report?') && r.url().includes('format=html'))
    await page.getByTestId('report-preview-btn').click()
    const res = await answer
    expect(res.status()).toBe(200)
    expect(res.headers()['content-type']).toMatch(/^text\/html/)
    const sha = res.headers()['x-netmon-report-sha256']
    expect(sha).toMatch(/^[0-9a-f]{64}$/)
    // the SHA-256 shown is the one of the body the hub sent
    await expect.poll(() => page.getByTestId('report-sha').textContent()).toBe(sha)
    const frame = page.getByTestId('report-preview')
    expect(await frame.getAttribute('sandbox')).toBe('')
    const doc = page.frameLocator('[data-testid="report-preview"]')
    await expect.poll(async () => (await doc.locator('title').textContent()) ?? '', { timeout: 10_000 }).toMatch(/traffic/i)
    await expect.poll(async () => doc.locator('h1').count()).toBeGreaterThan(0)
    // styled: the report's own stylesheet applies in the frame (the body's
    // max-width 210mm is 793.7px), which the console's CSP would refuse
    // in a srcdoc frame
    await expect.poll(async () => doc.locator('body').evaluate((b) => getComputedStyle(b).maxWidth)).toBe('793.701px')
    // generated reports are archived: the preview is the archive's newest
    await expect.poll(async () => (await apiJSON<ArchiveEntry[]>('/api/v1/reports/archive'))[0]?.sha256).toBe(sha)
    await screenshot(page, 'reports-preview')
  })

  test('Download PDF: application/pdf, attachment under the hub\'s file name', async () => {
    const answer = page.waitForResponse((r) => r.url().includes('/api/report?') && r.url().includes('format=pdf'))
    const download = page.waitForEvent('download')
    await page.getByTestId('report-pdf-btn').click()
    const res = await answer
    expect(res.status()).toBe(200)
    expect(res.headers()['content-type']).toBe('application/pdf')
    const disp = res.headers()['content-disposition']
    expect(disp).toMatch(/^attachment; filename=netmon-traffic-all-\d{8}-\d{8}\.pdf$/)
    const d = await download
    expect(d.suggestedFilename()).toBe(disp.replace(/^attachment; filename=/, ''))
    await expect.poll(() => page.getByTestId('report-sha').textContent()).toBe(res.headers()['x-netmon-report-sha256'])
  })

  test('a schedule: a bad spec refused at its field, a good one listed, run now into the archive', async () => {
    await page.locator('#sc-name').fill('e2e weekly')
    await page.locator('#sc-spec').fill('every:day')
    await page.locator('#sc-tz').fill('Europe/Istanbul')
    await page.getByRole('button', { name: 'Create schedule' }).click()
    await expect.poll(() => page.getByTestId('sc-spec-err').textContent()).toMatch(/^spec: /)
    expect(await page.locator('#sc-spec').getAttribute('aria-invalid')).toBe('true')
    expect(await apiJSON<Schedule[]>('/api/v1/reports/schedules')).toEqual([])

    await page.locator('#sc-spec').fill('weekly:mon:08:00')
    await page.getByRole('button', { name: 'Create schedule' }).click()
    const table = page.getByTestId('schedules-table')
    const row = table.locator('tbody tr', { hasText: 'e2e weekly' })
    await expect.poll(() => row.count()).toBe(1)
    expect(await row.textContent()).toContain('weekly:mon:08:00 Europe/Istanbul')
    expect(await page.getByTestId('sc-spec-err').count()).toBe(0)
    const [sched] = await apiJSON<Schedule[]>('/api/v1/reports/schedules')
    expect(sched.name).toBe('e2e weekly')

    const before = (await apiJSON<ArchiveEntry[]>('/api/v1/reports/archive')).length
    await row.getByRole('button', { name: 'Run now' }).click()
    await expect.poll(async () => (await apiJSON<ArchiveEntry[]>('/api/v1/reports/archive')).length).toBe(before + 1)
    const [made] = await apiJSON<ArchiveEntry[]>('/api/v1/reports/archive')
    expect(made.schedule_id).toBe(sched.id)
    const arow = page.locator(`[data-archive="${made.id}"]`)
    await expect.poll(() => arow.count()).toBe(1)
    expect(await arow.getByTestId('archive-sha').getAttribute('title')).toBe(made.sha256)
    expect(await arow.getByTestId('archive-sha').textContent()).toBe(`${made.sha256.slice(0, 12)}…`)
    expect(await arow.getByRole('link', { name: 'Download' }).getAttribute('href')).toBe(`/api/v1/reports/archive/${made.id}`)
    // the archived file downloads byte for byte: sha256sum prints the SHA-256 listed
    const download = page.waitForEvent('download')
    await arow.getByRole('link', { name: 'Download' }).click()
    const d = await download
    expect(d.suggestedFilename()).toBe(made.filename)
    const file = await d.path()
    expect(createHash('sha256').update(readFileSync(file)).digest('hex')).toBe(made.sha256)
    await screenshot(page, 'reports-schedules')
  })

  test('an SLA target is listed with the status the hub measures', async () => {
    await page.locator('#sla-name').fill('e2e uptime')
    await page.locator('#sla-metric').selectOption('agent_uptime')
    await page.locator('#sla-threshold').fill('99.5')
    await page.locator('#sla-window').fill('24')
    await page.getByRole('button', { name: 'Add target' }).click()
    const row = page.getByTestId('sla-table').locator('tbody tr', { hasText: 'e2e uptime' })
    await expect.poll(() => row.count()).toBe(1)
    const [st] = (await apiJSON<SLAStatus[]>('/api/v1/sla/targets')).filter((s) => s.target.name === 'e2e uptime')
    const want = st.no_data ? 'no data' : st.met ? 'met' : 'breached'
    expect(await row.getByTestId('sla-state').textContent()).toBe(want)
    expect(await row.textContent()).toContain('Agent uptime ≥ 99.5%')
    expect(watch.pageErrors).toEqual([])
    expect(watch.dialogs).toEqual([])
  })

  test('a viewer: the compliance report and the SLA list only', async () => {
    const made = await ctx.request.post(`${hub.url}/api/v1/users`, { ...own(), data: { username: 'vic', password: 'vic-password-1', role: 'viewer' } })
    expect(made.status(), await made.text()).toBe(200)
    const v = await newWatchedContext(browser)
    try {
      await login(v.page, hub, 'vic', 'vic-password-1')
      await v.page.goto(`${hub.url}/reports`)
      await expect.poll(() => v.page.getByTestId('sla-table').count()).toBe(1)
      expect(await v.page.locator('#rep-type option').allTextContents()).toEqual(['compliance'])
      expect(await v.page.getByTestId('schedule-form').count()).toBe(0)
      expect(await v.page.getByTestId('schedules-table').count()).toBe(0)
      expect(await v.page.getByTestId('archive-table').count()).toBe(0)
      expect(await v.page.getByTestId('sla-form').count()).toBe(0)
      await expect.poll(() => v.page.getByTestId('sla-table').locator('tbody tr', { hasText: 'e2e uptime' }).count()).toBe(1)
      // the compliance report needs only view
      const answer = v.page.waitForResponse((r) => r.url().includes('/api/report?'))
      await v.page.getByTestId('report-preview-btn').click()
      const res = await answer
      expect(res.url()).toContain('type=compliance')
      expect(res.status()).toBe(200)
      await expect.poll(() => v.page.getByTestId('report-sha').textContent()).toBe(res.headers()['x-netmon-report-sha256'])
      // the API agrees: schedules need analyze
      expect((await v.page.request.get(`${hub.url}/api/v1/reports/schedules`)).status()).toBe(403)
      expect(v.watch.pageErrors).toEqual([])
    } finally {
      await v.ctx.close()
    }
  })
})
