// Device detail page (issue 20): a real snmpd (hostile sysName/sysDescr,
// case 29) polled by the hub, and the fixture firewall device of
// collectors/fwrest/fwtest (started with `go run ./testdata/fwrest/serve`,
// never part of the binary) polled over its REST API. The page's
// interface table, resource charts and VPN/SD-WAN/policy tabs must show
// exactly what the API answers, with the range and tab in the URL.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { DeviceIface, DeviceItem } from '../src/api/types'
import { freeUdpPort, launchBrowser, login, newWatchedContext, repoDir, screenshot, startHub, type Hub, type Watch } from './hub'

const DESCR = '<img src=x onerror=alert(1)> \u202Egnp.exe'
const NAME = '<svg onload=alert(2)>'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let snmpd: ChildProcess
let fw: ChildProcess
let snmpID = 0
let fwID = 0

/** Starts the fixture firewall and resolves its https URL. */
function startFirewall(): Promise<string> {
  fw = spawn('go', ['run', './testdata/fwrest/serve', join(repoDir, 'testdata', 'fwrest', '7.6'), 'fw-token'], {
    cwd: repoDir,
    env: { ...process.env, GOFLAGS: '-tags=nomsgpack' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  return new Promise((ok, fail) => {
    let out = ''
    let errOut = ''
    fw.stderr?.on('data', (b: Buffer) => (errOut += b.toString()))
    fw.stdout?.on('data', (b: Buffer) => {
      out += b.toString()
      const line = out.split('\n')[0]
      if (out.includes('\n') && line) ok(line.trim())
    })
    fw.once('error', (e) => fail(new Error(`go is needed for the fixture firewall: ${e.message}`)))
    fw.once('exit', (code) => fail(new Error(`fixture firewall exited ${code}: ${errOut}`)))
  })
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'nm-snmpd-'))
  mkdirSync(join(dir, 'persist'))
  const port = await freeUdpPort()
  const agent = `127.0.0.1:${port}`
  writeFileSync(join(dir, 'snmpd.conf'), `agentAddress udp:${agent}\nrocommunity public 127.0.0.1\nsysName ${NAME}\nsysDescr ${DESCR}\n`)
  snmpd = spawn('snmpd', ['-f', '-LS0-4d', '-C', '-c', join(dir, 'snmpd.conf'), '-M', '/dev/null', '-p', join(dir, 'pid')], {
    env: { ...process.env, SNMP_PERSISTENT_DIR: join(dir, 'persist'), MIBS: '', MIBDIRS: '/dev/null' },
    stdio: 'ignore',
  })
  await new Promise<void>((ok, fail) => {
    snmpd.once('error', (e) => fail(new Error(`snmpd is needed (apt-get install snmpd): ${e.message}`)))
    setTimeout(ok, 500)
  })
  const fwURL = await startFirewall()
  // the fixture listens on loopback: the outbound guard must let it through
  hub = await startHub({ extraArgs: ['-outbound-allow', '127.0.0.1/32'] })
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await login(page, hub)
  const own = { headers: { Origin: hub.url } }
  const made = await ctx.request.post(`${hub.url}/api/v1/devices`, { ...own, data: { name: 'edge', host: agent, community: 'public', poll_seconds: 10 } })
  expect(made.status()).toBe(200)
  snmpID = ((await made.json()) as DeviceItem).id
  const fwMade = await ctx.request.post(`${hub.url}/api/v1/devices`, {
    ...own,
    data: { name: 'fw-paris', kind: 'firewall', vendor: 'fwvendor', api_url: fwURL, api_token: 'fw-token', api_verify_tls: false, poll_seconds: 60 },
  })
  expect(fwMade.status(), await fwMade.text()).toBe(200)
  fwID = ((await fwMade.json()) as DeviceItem).id
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
  snmpd?.kill('SIGTERM')
  fw?.stdin?.end()
  fw?.kill('SIGTERM')
})

async function api<T>(path: string): Promise<T> {
  const r = await ctx.request.get(`${hub.url}${path}`)
  expect(r.status()).toBe(200)
  return (await r.json()) as T
}

/** The y range a chart drew: [min, max] from its host element. */
async function yAxis(testid: string): Promise<[number, number]> {
  const host = page.getByTestId(testid).locator('.uplot-host')
  await expect.poll(() => host.getAttribute('data-y-max'), { timeout: 10_000 }).not.toBeNull()
  return [Number(await host.getAttribute('data-y-min')), Number(await host.getAttribute('data-y-max'))]
}

function util(v: number | null | undefined): string {
  return v == null ? '–' : `${v.toFixed(1)}%`
}

describe('device detail', () => {
  test('the list links to the detail page', async () => {
    await page.goto(`${hub.url}/devices`)
    const link = page.getByTestId('devices-table').getByTestId('device-link').first()
    await link.click()
    await page.waitForURL(`${hub.url}/devices/${snmpID}`)
    await expect.poll(() => page.locator('h1').textContent(), { timeout: 10_000 }).toBe('Device edge')
  })

  test('snmpd interfaces are exactly what the API answers, hostile strings as text', async () => {
    // wait for the first poll (10 s interval)
    await expect.poll(async () => (await api<DeviceIface[]>(`/api/v1/devices/${snmpID}/interfaces?minutes=360`)).length, { timeout: 40_000, interval: 2000 }).toBeGreaterThan(0)
    // the page and the API may read different polls: compare until they agree
    await expect.poll(async () => {
      await page.goto(`${hub.url}/devices/${snmpID}?range=6h`)
      const rows = page.getByTestId('device-ifaces').locator('tbody tr[data-ifindex]')
      await rows.first().waitFor()
      const want = (await api<DeviceIface[]>(`/api/v1/devices/${snmpID}/interfaces?minutes=360`)).slice(0, 25)
      const got = await rows.evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent ?? '')))
      const exp = want.map((f) => {
        return [String(f.if_index), f.name, f.alias, f.class, `${f.oper_up ? 'up' : 'down'}${f.admin_up ? '' : ' (admin down)'}`, `${util(f.rx_util_pct)} / ${util(f.tx_util_pct)}`, f.status]
      })
      return JSON.stringify(got.map((c) => [c[0], c[1], c[2], c[3], c[4], c[8], c[9]])) === JSON.stringify(exp) ? 'same' : JSON.stringify({ got, exp })
    }, { timeout: 40_000, interval: 1000 }).toBe('same')
    const lo = page.getByTestId('device-ifaces').locator('tbody tr[data-ifindex="1"]')
    expect(await lo.locator('td').nth(1).textContent()).toBe('lo')
    expect(await lo.locator('td').nth(3).textContent()).toBe('loopback')
    expect(await lo.getByTestId('iface-status').textContent()).toBe('normal')
    // the chosen interface's utilisation chart over the range, chosen in the URL
    await lo.getByRole('button').click()
    await page.waitForURL(/[?&]if=1(&|$)/)
    expect(await page.getByTestId('iface-chart-title').textContent()).toBe('Utilisation of lo')
    const hist = await api<{ ts: number }[]>(`/api/v1/devices/${snmpID}/interfaces/1/history?minutes=360`)
    expect(hist.length).toBeGreaterThan(0)
    await page.getByTestId('iface-chart').locator('canvas').waitFor()
    // the range stays in the URL and the Picker shows it
    expect(new URL(page.url()).searchParams.get('range')).toBe('6h')
    expect(await page.locator('.picker-opt.active').textContent()).toBe('6h')
    const summary = page.getByTestId('device-summary')
    expect(await summary.textContent()).toContain('<img src=x onerror=alert(1)> U+202Egnp.exe')
    expect(await summary.textContent()).toContain(NAME)
    expect(await page.locator('img[src="x"], svg[onload]').count()).toBe(0)
    // an SNMP switch has no firewall tabs
    expect(await page.getByRole('tab').allTextContents()).toEqual(['Interfaces', 'Resources'])
    await page.getByTestId('tab-resources').click()
    expect(new URL(page.url()).searchParams.get('tab')).toBe('resources')
    await page.getByTestId('device-res-chart').locator('canvas').waitFor()
    expect(await page.getByTestId('device-sess-chart').count()).toBe(1)
    expect(watch.dialogs).toEqual([])
    await screenshot(page, 'device-detail')
  })

  test('firewall VPN, SD-WAN and policy tabs from the fixture device', async () => {
    // a REST device is polled once a minute, at a phase within it
    await expect.poll(async () => (await api<unknown[]>(`/api/v1/devices/${fwID}/vpn`)).length, { timeout: 80_000, interval: 2000 }).toBe(3)
    await page.goto(`${hub.url}/devices/${fwID}?tab=vpn`)
    await expect.poll(() => page.getByRole('tab').allTextContents(), { timeout: 10_000 }).toEqual(['Interfaces', 'Resources', 'VPN', 'SD-WAN', 'Policies'])
    const vpn = page.getByTestId('device-vpn').locator('tbody tr')
    await expect.poll(() => vpn.count(), { timeout: 10_000 }).toBe(3)
    const cells = await vpn.evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).slice(0, 5).map((td) => td.textContent)))
    expect(cells.map((c) => [c[1], c[2], c[4]])).toEqual([['ipsec', 'to-branch', 'down'], ['ipsec', 'to-hq', 'up'], ['ssl', 'alice', 'up']])
    expect(await vpn.nth(1).locator('td').nth(6).textContent()).toBe('4.88 KiB')

    await page.getByTestId('tab-sdwan').click()
    expect(new URL(page.url()).searchParams.get('tab')).toBe('sdwan')
    const sd = page.getByTestId('device-sdwan').locator('tbody tr')
    await expect.poll(() => sd.count(), { timeout: 10_000 }).toBe(2)
    const sdCells = await sd.evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)))
    expect(sdCells).toEqual([['root', 'dns-check', 'port1', 'up', '12.5 ms', '0.8 ms', '0.0%'], ['root', 'dns-check', 'port3', 'down', '0.0 ms', '0.0 ms', '100.0%']])
    for (const id of ['sdwan-latency-chart', 'sdwan-jitter-chart', 'sdwan-loss-chart']) await page.getByTestId(id).locator('canvas').waitFor()
    // unit-aware axes (issue 28 item 16): latency 12.5 ms on 0-20 ms, loss
    // (0 and 100%) on 0-100%, not the old 0-1000 of every chart
    expect(await yAxis('sdwan-latency-chart')).toEqual([0, 20])
    expect(await yAxis('sdwan-loss-chart')).toEqual([0, 100])

    await page.getByTestId('tab-policies').click()
    const pol = page.getByTestId('device-policies').locator('tbody tr')
    await expect.poll(() => pol.count(), { timeout: 10_000 }).toBe(2)
    const polCells = await pol.evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).slice(0, 7).map((td) => td.textContent)))
    expect(polCells[0]![1]).toBe('1')
    expect(polCells[0]![3]).toBe('450')
    expect(polCells[0]![6]).toBe('12')
    expect(polCells[1]![1]).toBe('7')

    // CPU 7%, memory 41%, disk 12% on a 0-100% axis; 1 834 sessions on 0-2 500
    await page.getByTestId('tab-resources').click()
    await page.getByTestId('device-res-chart').locator('canvas').waitFor()
    expect(await yAxis('device-res-chart')).toEqual([0, 100])
    expect(await yAxis('device-sess-chart')).toEqual([0, 2500])
    expect(watch.dialogs).toEqual([])
    await screenshot(page, 'device-detail-fw')
  })
})
