// Devices page (issue 20) with RELIABILITY case 29: a real snmpd whose
// sysName and sysDescr carry markup and an RTL override, polled by the
// hub; the Devices page shows them literally in Chromium and no script
// runs. The test-connection button reports the probe.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { freeUdpPort, launchBrowser, login, newWatchedContext, screenshot, sleep, startHub, type Hub, type Watch } from './hub'

const DESCR = '<img src=x onerror=alert(1)> \u202Egnp.exe'
const NAME = '<svg onload=alert(2)>'

let hub: Hub
let browser: Browser
let ctx: BrowserContext
let page: Page
let watch: Watch
let snmpd: ChildProcess
let agent = ''

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'nm-snmpd-'))
  mkdirSync(join(dir, 'persist'))
  const port = await freeUdpPort()
  agent = `127.0.0.1:${port}`
  writeFileSync(join(dir, 'snmpd.conf'), `agentAddress udp:${agent}\nrocommunity public 127.0.0.1\nsysName ${NAME}\nsysDescr ${DESCR}\n`)
  snmpd = spawn('snmpd', ['-f', '-LS0-4d', '-C', '-c', join(dir, 'snmpd.conf'), '-M', '/dev/null', '-p', join(dir, 'pid')], {
    env: { ...process.env, SNMP_PERSISTENT_DIR: join(dir, 'persist'), MIBS: '', MIBDIRS: '/dev/null' },
    stdio: 'ignore',
  })
  await new Promise<void>((ok, fail) => {
    snmpd.once('error', (e) => fail(new Error(`snmpd is needed (apt-get install snmpd): ${e.message}`)))
    setTimeout(ok, 500)
  })
  hub = await startHub()
  browser = await launchBrowser()
  ;({ ctx, page, watch } = await newWatchedContext(browser))
  await login(page, hub)
  const own = { headers: { Origin: hub.url } }
  const made = await ctx.request.post(`${hub.url}/api/v1/devices`, { ...own, data: { name: 'edge', host: agent, community: 'public', poll_seconds: 10 } })
  expect(made.status()).toBe(200)
})

afterAll(async () => {
  await ctx?.close()
  await browser?.close()
  await hub?.stop()
  snmpd?.kill('SIGTERM')
})

describe('devices', () => {
  test('hostile sysName and sysDescr are shown literally', async () => {
    await page.goto(`${hub.url}/devices`)
    const table = page.getByTestId('devices-table')
    // the first poll comes within the 10 s interval; the list refreshes every 15 s
    await expect.poll(async () => {
      await page.reload()
      return table.textContent()
    }, { timeout: 40_000, interval: 3000 }).toContain('<img src=x onerror=alert(1)> U+202Egnp.exe')
    expect(await table.textContent()).toContain(NAME)
    const titles = await table.locator('bdi.safe').evaluateAll((els) => els.map((e) => e.getAttribute('title')))
    expect(titles).toContain(DESCR)
    expect(watch.dialogs).toEqual([])
    expect(await page.locator('img[src="x"], svg[onload]').count()).toBe(0)
    await screenshot(page, 'devices')
  })

  test('test connection reports the probe', async () => {
    await page.goto(`${hub.url}/devices`)
    await page.locator('#dv-name').fill('probe')
    await page.locator('#dv-host').fill(agent)
    await page.getByTestId('device-test').click()
    const report = page.getByTestId('device-probe')
    await expect.poll(() => report.textContent(), { timeout: 15_000 }).toContain('Answered in')
    expect(await report.textContent()).toContain('interfaces')
    expect(await page.locator('img[src="x"], svg[onload]').count()).toBe(0)
    await sleep(100)
  })

  test('topology page draws the devices', async () => {
    await page.goto(`${hub.url}/topology`)
    const svg = page.getByTestId('topology-svg')
    await expect.poll(() => svg.locator('circle').count(), { timeout: 10_000 }).toBe(1)
    expect(await page.getByTestId('topology-links').locator('tbody tr').count()).toBe(0)
    expect(watch.dialogs).toEqual([])
  })
})
