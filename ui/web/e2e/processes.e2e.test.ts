// The process pages in real Chromium against the hub binary (issue 17):
// two agents simulated over HTTP with the real agent protocol send one
// telemetry batch each carrying the deep collection sections (processes
// with remotes and the (unattributed) reasons, TLS SNI / HTTP Host, DNS).
// Then: the Processes page's exact fleet-wide sums and agent counts, the
// unattributed reason breakdown summed over the agents, the agent filter
// and range kept in the URL, the links (process → detail, agent → agent
// page, name → Events filtered view, remote ip → host page), the detail
// page of a plain name, of a name with a slash and of (unattributed), the
// per-process table of the agent page, and hostile process names and SNI
// (markup, RTL override) shown only as text (RELIABILITY case 29);
// screenshots in both themes.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser, login, newWatchedContext, pageCsp, screenshot, setTheme, sleep, startHub, type Hub, type Watch } from './hub'
import { SimAgent } from './fleet'
import { formatBits, formatBytes } from '../src/lib/format'

const TOKEN = 'e2e-static-enroll-token-processes-42'
const XSS_PROCESS = '<img src=x onerror=alert(1)>'
const XSS_SNI = '<img src=x onerror=alert(2)>.evil.test'
const RTL_PROCESS = '\u202Efdp.exe'
const RTL_SNI = '\u202Egnp.exe.evil.test'
const SLASH_PROCESS = 'kworker/u8:2'
const UNATTR = '(unattributed)'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let web: SimAgent
let db: SimAgent

interface ProcItem {
  process: string
  bytes_in: number
  bytes_out: number
  total: number
  agent_count: number
}

async function apiGet<T>(path: string): Promise<T> {
  const r = await ctx.request.get(`${hub.url}${path}`)
  expect(r.status(), path).toBe(200)
  return (await r.json()) as T
}

/** The visible text of each body row's cells, whitespace collapsed. */
async function rows(testid: string): Promise<string[][]> {
  const t = page.getByTestId(testid)
  await t.waitFor()
  return t.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => (td.textContent ?? '').replace(/\s+/g, ' ').trim())),
  )
}

/** The title (exact byte count) of each body row's cells. */
async function titles(testid: string): Promise<string[][]> {
  return page
    .getByTestId(testid)
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.getAttribute('title') ?? '')))
}

async function assertNoScriptRan(): Promise<void> {
  expect(watch.dialogs).toEqual([])
  expect(await page.locator('img[src="x"], script:not([src])').count()).toBe(0)
}

beforeAll(async () => {
  hub = await startHub({ extraArgs: ['-enroll-token', TOKEN, '-agent-interval', '1'] })
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  web = new SimAgent(hub.url, {
    name: 'e2e-web-01',
    machineId: 'e2e-proc-web-01',
    interfaces: [{ name: 'eth0', rxRate: 100_000, txRate: 10_000, ppsRate: 100 }],
    connections: [
      { proto: 'tcp', local_addr: '10.0.0.7:50000', remote_addr: '198.51.100.7:443', status: 'ESTABLISHED', pid: 4242, process: 'curl' },
      { proto: 'tcp', local_addr: '10.0.0.7:22', remote_addr: '203.0.113.9:40022', status: 'ESTABLISHED', pid: 102, process: 'sshd' },
    ],
  })
  db = new SimAgent(hub.url, {
    name: 'e2e-db-01',
    machineId: 'e2e-proc-db-01',
    interfaces: [{ name: 'ens3', rxRate: 50_000, txRate: 5_000, ppsRate: 50 }],
    connections: [{ proto: 'tcp', local_addr: '10.0.0.8:5432', remote_addr: '10.0.0.7:50110', status: 'ESTABLISHED', pid: 201, process: 'postgres' }],
  })
  await web.enroll(TOKEN)
  await db.enroll(TOKEN)
  expect(
    await web.send(undefined, 1, {
      processes: [
        { process: 'curl', pid: 4242, bytes_in: 1_048_576, bytes_out: 20_480, packets_in: 800, packets_out: 300,
          remotes: [{ proto: 'tcp', ip: '198.51.100.7', port: 443, bytes_in: 1_048_576, bytes_out: 20_480, packets_in: 800, packets_out: 300 }] },
        { process: XSS_PROCESS, pid: 77, bytes_in: 2048, bytes_out: 1024, packets_in: 4, packets_out: 2,
          remotes: [{ proto: 'tcp', ip: '203.0.113.5', port: 80, bytes_in: 2048, bytes_out: 1024, packets_in: 4, packets_out: 2 }] },
        { process: SLASH_PROCESS, pid: 12, bytes_in: 512, bytes_out: 0, packets_in: 1, packets_out: 0 },
        { process: RTL_PROCESS, pid: 66, bytes_in: 256, bytes_out: 0, packets_in: 1, packets_out: 0 },
        { process: '', pid: 0, bytes_in: 4096, bytes_out: 4096, packets_in: 4, packets_out: 4,
          reasons: [{ reason: 'process gone', bytes: 6144, packets: 6 }, { reason: 'other network namespace', bytes: 2048, packets: 2 }] },
      ],
      l7: [
        { host: 'api.example.com', kind: 'tls', process: 'curl', pid: 4242, bytes: 1_069_056, hits: 3 },
        { host: RTL_SNI, kind: 'http', process: 'curl', pid: 4242, bytes: 100, hits: 1 },
        { host: XSS_SNI, kind: 'tls', process: XSS_PROCESS, pid: 77, bytes: 3072, hits: 1 },
      ],
      dns: [{ domain: 'api.example.com', process: 'curl', pid: 4242, queries: 2, responses: 2 }],
    }),
  ).toBe(200)
  expect(
    await db.send(undefined, 1, {
      processes: [
        { process: 'postgres', pid: 201, bytes_in: 10_485_760, bytes_out: 5_242_880, packets_in: 9000, packets_out: 5000 },
        { process: 'curl', pid: 999, bytes_in: 1024, bytes_out: 1024, packets_in: 2, packets_out: 2 },
        { process: '', pid: 0, bytes_in: 1000, bytes_out: 0, packets_in: 1, packets_out: 0, reasons: [{ reason: 'process gone', bytes: 1000, packets: 1 }] },
      ],
      dns: [{ domain: 'api.example.com', process: 'curl', pid: 999, queries: 1, responses: 1 }],
    }),
  ).toBe(200)
  await login(page, hub)
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
})

describe('process pages', () => {
  test('the hub sums the sections of both agents (its API, before the console)', async () => {
    // the store writes the sections within a second or two
    await expect
      .poll(async () => {
        const ps = await apiGet<ProcItem[]>('/api/v1/processes?minutes=60')
        const dns = await apiGet<{ queries: number }[]>('/api/v1/dns?minutes=60')
        return `${ps.length} ${ps.find((p) => p.process === 'curl')?.agent_count ?? 0} ${dns[0]?.queries ?? 0}`
      }, { timeout: 20_000 })
      .toBe('6 2 3')
    const ps = await apiGet<ProcItem[]>('/api/v1/processes?minutes=60')
    expect(ps.find((p) => p.process === 'curl')).toEqual({ process: 'curl', bytes_in: 1_049_600, bytes_out: 21_504, total: 1_071_104, agent_count: 2 })
    expect(ps.find((p) => p.process === UNATTR)).toEqual({ process: UNATTR, bytes_in: 5096, bytes_out: 4096, total: 9192, agent_count: 2 })
  })

  test('Processes page: fleet-wide sums, agent counts and links to each agent, the unattributed reasons', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Processes', exact: true }).click()
    await page.waitForURL(/\/processes$/)
    await expect.poll(async () => (await rows('proc-table')).length, { timeout: 15_000 }).toBe(6)
    // agent links appear once the per-agent lists are in
    await expect.poll(async () => (await rows('proc-table'))[1]?.[4], { timeout: 15_000 }).toBe('2 · e2e-web-01 › · e2e-db-01 ›')
    expect(await rows('proc-table')).toEqual([
      ['postgres', formatBytes(10_485_760), formatBytes(5_242_880), formatBytes(15_728_640), '1 · e2e-db-01 ›'],
      ['curl', formatBytes(1_049_600), formatBytes(21_504), formatBytes(1_071_104), '2 · e2e-web-01 › · e2e-db-01 ›'],
      [UNATTR, formatBytes(5096), formatBytes(4096), formatBytes(9192), '2 · e2e-web-01 › · e2e-db-01 ›'],
      [XSS_PROCESS, formatBytes(2048), formatBytes(1024), formatBytes(3072), '1 · e2e-web-01 ›'],
      [SLASH_PROCESS, '512 B', '0 B', '512 B', '1 · e2e-web-01 ›'],
      ['U+202Efdp.exe', '256 B', '0 B', '256 B', '1 · e2e-web-01 ›'],
    ])
    expect((await titles('proc-table'))[1]?.slice(1, 4)).toEqual(['1,049,600 B', '21,504 B', '1,071,104 B'])
    // (unattributed): 6144 + 1000 B "process gone", 2048 B "other network namespace"
    await expect.poll(() => rows('unattr-table'), { timeout: 15_000 }).toEqual([
      ['process gone', formatBytes(7144), '7', '78%'],
      ['other network namespace', formatBytes(2048), '2', '22%'],
    ])
    expect((await titles('unattr-table')).map((r) => r[1])).toEqual(['7,144 B', '2,048 B'])
    expect(await rows('l7-table')).toEqual([
      ['api.example.com', 'tls', 'curl', formatBytes(1_069_056), '3', '1'],
      [XSS_SNI, 'tls', XSS_PROCESS, formatBytes(3072), '1', '1'],
      ['U+202Egnp.exe.evil.test', 'http', 'curl', '100 B', '1', '1'],
    ])
    expect(await rows('dns-table')).toEqual([['api.example.com', 'curl', '3', '3', '2']])
    // hostile names are text: literal markup, the override as a marker, raw in the title
    expect(await page.getByTestId('l7-table').locator('img').count()).toBe(0)
    expect(await page.getByTestId('proc-table').locator('bdi[title]').evaluateAll((bs) => bs.map((b) => b.getAttribute('title')))).toContain(RTL_PROCESS)
    await assertNoScriptRan()
    await screenshot(page, 'processes-fleet-light')
  })

  test('agent filter and range live in the URL and narrow the lists to that agent', async () => {
    await page.goto(`${hub.url}/processes`)
    await page.getByTestId('proc-agent').selectOption(String(web.id))
    await page.waitForURL((u) => u.searchParams.get('agent_id') === String(web.id))
    await page.getByText('6h', { exact: true }).click()
    await page.waitForURL((u) => u.searchParams.get('range') === '6h' && u.searchParams.get('agent_id') === String(web.id))
    await expect.poll(async () => (await rows('proc-table')).map((r) => r[0]), { timeout: 15_000 }).toEqual(['curl', UNATTR, XSS_PROCESS, SLASH_PROCESS, 'U+202Efdp.exe'])
    expect((await titles('proc-table'))[0]?.slice(1, 4)).toEqual(['1,048,576 B', '20,480 B', '1,069,056 B'])
    expect((await rows('proc-table'))[0]?.[4]).toBe('1 · e2e-web-01')
    expect(await rows('dns-table')).toEqual([['api.example.com', 'curl', '2', '2', '1']])
    await expect.poll(() => rows('unattr-table'), { timeout: 15_000 }).toEqual([
      ['process gone', formatBytes(6144), '6', '75%'],
      ['other network namespace', formatBytes(2048), '2', '25%'],
    ])
    // a reload keeps the filter (it is the URL)
    await page.reload()
    await expect.poll(() => page.getByTestId('proc-agent').inputValue(), { timeout: 15_000 }).toBe(String(web.id))
    await expect.poll(async () => (await rows('proc-table')).length, { timeout: 15_000 }).toBe(5)
  })

  test('links: domain → Events filtered view, agent name → agent page, process → detail', async () => {
    await page.goto(`${hub.url}/processes`)
    await page.getByTestId('dns-table').getByRole('link', { name: 'api.example.com' }).click()
    await page.waitForURL((u) => u.pathname === '/events' && u.searchParams.get('domain') === 'api.example.com')
    expect(await page.locator('#e-domain').inputValue()).toBe('api.example.com')

    await page.goto(`${hub.url}/processes`)
    const pgRow = page.getByTestId('proc-table').locator('tbody tr').first()
    await pgRow.getByTestId('agent-link').waitFor({ timeout: 15_000 })
    await pgRow.getByTestId('agent-link').click()
    await page.waitForURL((u) => u.pathname === `/agents/${db.id}`)

    await page.goto(`${hub.url}/processes?agent_id=${web.id}`)
    await page.getByTestId('proc-table').getByRole('link', { name: 'curl', exact: true }).click()
    await page.waitForURL((u) => u.pathname === `/agents/${web.id}/processes/curl`)
    await expect.poll(() => page.getByTestId('process-pids').textContent(), { timeout: 15_000 }).toBe('4242')
  })

  test('detail page: summary, destinations with host links, live sockets, names, timeline', async () => {
    await page.goto(`${hub.url}/agents/${web.id}/processes/curl`)
    await expect.poll(() => page.getByTestId('process-pids').textContent(), { timeout: 15_000 }).toBe('4242')
    expect(await page.getByTestId('process-total').getAttribute('title')).toBe('1,069,056 B')
    expect(await page.getByTestId('process-in').getAttribute('title')).toBe('1,048,576 B')
    expect(await page.getByTestId('process-out').getAttribute('title')).toBe('20,480 B')
    // one minute with traffic: its bytes over 60 s, shown in bits/s (143 kbit/s)
    expect(await page.getByTestId('process-rate').textContent()).toBe(formatBits((1_069_056 / 60) * 8))
    expect(await page.getByTestId('process-agent-link').textContent()).toBe('e2e-web-01')
    const dests = await rows('process-dests-table')
    expect(dests.map((r) => r.slice(0, 5))).toEqual([['198.51.100.7', '443', 'tcp', formatBytes(1_048_576), formatBytes(20_480)]])
    expect(await rows('process-conns-table')).toEqual([['tcp', '10.0.0.7:50000', '198.51.100.7:443', 'ESTABLISHED', '4242']])
    const names = (await rows('process-names-table')).map((r) => r.slice(0, 5)).sort((a, b) => (a.join() < b.join() ? -1 : 1))
    expect(names).toEqual([
      ['dns', 'api.example.com', '2', '2', '—'],
      ['http', 'U+202Egnp.exe.evil.test', '1', '—', '100 B'],
      ['tls', 'api.example.com', '3', '—', formatBytes(1_069_056)],
    ])
    const tl = (await page.getByTestId('process-timeline').textContent()) ?? ''
    expect(tl).toContain('No related alerts.')
    expect(tl).not.toContain('First DNS query: none')
    expect(tl).not.toContain('First TLS / HTTP contact: none')
    await page.getByTestId('process-chart').locator('canvas').first().waitFor({ timeout: 15_000 })
    await screenshot(page, 'process-detail-light')
    await page.getByTestId('process-dests-table').getByTestId('host-link').click()
    await page.waitForURL((u) => u.pathname === '/hosts/198.51.100.7')
  })

  test('a name with a slash and a hostile name travel as one escaped segment; (unattributed) shows its reasons', async () => {
    await page.goto(`${hub.url}/processes?agent_id=${web.id}`)
    await page.getByTestId('proc-table').getByRole('link', { name: SLASH_PROCESS }).click()
    await page.waitForURL((u) => u.pathname === `/agents/${web.id}/processes/kworker%2Fu8:2`)
    await expect.poll(() => page.getByTestId('process-pids').textContent(), { timeout: 15_000 }).toBe('12')
    await page.reload()
    await expect.poll(() => page.getByTestId('process-pids').textContent(), { timeout: 15_000 }).toBe('12')

    await page.goto(`${hub.url}/processes?agent_id=${web.id}`)
    await page.getByTestId('proc-table').getByRole('link', { name: XSS_PROCESS }).click()
    await page.waitForURL((u) => u.pathname.startsWith(`/agents/${web.id}/processes/`) && decodeURIComponent(u.pathname).endsWith(XSS_PROCESS))
    await expect.poll(() => page.getByTestId('process-pids').textContent(), { timeout: 15_000 }).toBe('77')
    expect(await page.locator('h1').textContent()).toBe(`Process ${XSS_PROCESS}`)
    expect((await rows('process-names-table')).map((r) => r.slice(0, 2))).toEqual([['tls', XSS_SNI]])
    expect((await rows('process-dests-table')).map((r) => r[0])).toEqual(['203.0.113.5'])
    await assertNoScriptRan()

    await page.goto(`${hub.url}/agents/${web.id}/processes/${encodeURIComponent(UNATTR)}`)
    await expect.poll(() => rows('process-reasons-table'), { timeout: 15_000 }).toEqual([
      ['process gone', formatBytes(6144), '6'],
      ['other network namespace', formatBytes(2048), '2'],
    ])
    expect(await page.getByTestId('process-total').getAttribute('title')).toBe('8,192 B')
  })

  test('agent page: traffic by process, each linking to the detail', async () => {
    await page.goto(`${hub.url}/agents/${db.id}`)
    await expect.poll(() => rows('agent-procs-table'), { timeout: 15_000 }).toEqual([
      ['postgres', formatBytes(10_485_760), formatBytes(5_242_880), formatBytes(15_728_640)],
      ['curl', formatBytes(1024), formatBytes(1024), formatBytes(2048)],
      [UNATTR, formatBytes(1000), '0 B', formatBytes(1000)],
    ])
    await page.getByTestId('agent-procs-table').getByRole('link', { name: 'postgres' }).click()
    await page.waitForURL((u) => u.pathname === `/agents/${db.id}/processes/postgres`)
    await expect.poll(() => page.getByTestId('process-pids').textContent(), { timeout: 15_000 }).toBe('201')
    expect(await rows('process-conns-table')).toEqual([['tcp', '10.0.0.8:5432', '10.0.0.7:50110', 'ESTABLISHED', '201']])
  })

  test('long lists are paged: 36 processes show 25 at a time with a pager', async () => {
    const many = Array.from({ length: 30 }, (_, i) => ({
      process: `batch-${String(i).padStart(2, '0')}`, pid: 3000 + i, bytes_in: 100, bytes_out: 0, packets_in: 1, packets_out: 0,
    }))
    expect(await db.send(undefined, 1, { processes: many })).toBe(200)
    await expect.poll(async () => (await apiGet<ProcItem[]>('/api/v1/processes?minutes=60&limit=100')).length, { timeout: 20_000 }).toBe(36)
    await page.goto(`${hub.url}/processes`)
    await expect.poll(() => page.getByTestId('proc-table').locator('tbody tr').count(), { timeout: 15_000 }).toBe(25)
    const pager = page.getByRole('navigation', { name: 'Processes pages' })
    expect(await pager.textContent()).toContain('1–25 of 36')
    await pager.getByRole('button', { name: 'Next ›' }).click()
    await expect.poll(() => page.getByTestId('proc-table').locator('tbody tr').count()).toBe(11)
    expect(await pager.textContent()).toContain('26–36 of 36')
    await page.goto(`${hub.url}/agents/${db.id}`)
    await expect.poll(() => page.getByTestId('agent-procs-table').locator('tbody tr').count(), { timeout: 15_000 }).toBe(25)
    expect(await page.getByRole('navigation', { name: 'Processes pages' }).textContent()).toContain('1–25 of 33')
  })

  test('screenshots in both themes', async () => {
    const pages: [string, string][] = [
      ['processes', '/processes'],
      ['process-detail', `/agents/${web.id}/processes/curl`],
      ['agent-processes', `/agents/${web.id}`],
    ]
    for (const theme of ['light', 'dark'] as const) {
      await setTheme(page, theme)
      for (const [name, path] of pages) {
        await page.goto(`${hub.url}${path}`)
        await page.waitForLoadState('networkidle').catch(() => undefined)
        await sleep(500)
        expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(theme)
        await screenshot(page, `${name}-${theme}`)
      }
    }
  })

  test('no dialog, CSP violation or page error happened', async () => {
    await assertNoScriptRan()
    expect(watch.pageErrors).toEqual([])
    expect(watch.cspViolations).toEqual([])
    expect(await pageCsp(page)).toEqual([])
  })
})
