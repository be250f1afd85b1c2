// Starts a real hub (bin/netmon, built with the console embedded) on free
// loopback ports with a private database, record directory and vault key,
// and Debian's Chromium through playwright-core. Nothing is downloaded.
import { spawn, type ChildProcess } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

const here = dirname(fileURLToPath(import.meta.url))
export const webDir = resolve(here, '..')
export const repoDir = resolve(webDir, '..', '..')
export const resultsDir = join(webDir, 'test-results')
export const screensDir = join(resultsDir, 'screens')
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export function hubBinary(): string {
  const bin = process.env.NETMON_BIN ?? join(repoDir, 'bin', 'netmon')
  if (!existsSync(bin)) throw new Error(`${bin} not found: run make build (or set NETMON_BIN)`)
  return bin
}

export async function freeTcpPort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer()
    s.once('error', fail)
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      s.close(() => ok(port))
    })
  })
}

export async function freeUdpPort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createSocket('udp4')
    s.once('error', fail)
    s.bind(0, '127.0.0.1', () => {
      const port = s.address().port
      s.close(() => ok(port))
    })
  })
}

export interface Hub {
  url: string
  port: number
  syslogPort: number
  password: string
  dir: string
  recordDir: string
  log: () => string
  /** stops the hub gracefully and starts it again on the same database and port */
  restart: () => Promise<void>
  /** stops the hub gracefully, keeping its directory for resume */
  pause: () => Promise<void>
  /** starts a paused hub again on the same database and port */
  resume: () => Promise<void>
  stop: () => Promise<void>
}

export async function startHub(opts: { password?: string; extraArgs?: string[]; env?: Record<string, string> } = {}): Promise<Hub> {
  const bin = hubBinary()
  const dir = mkdtempSync(join(tmpdir(), 'netmon-e2e-'))
  const recordDir = join(dir, 'captures')
  mkdirSync(recordDir)
  let port = await freeTcpPort()
  let syslogPort = await freeUdpPort()
  const password = opts.password ?? 'e2e-bootstrap-password'
  const makeArgs = () => [
    'hub',
    '-port', String(port),
    '-db', join(dir, 'netmon.db'),
    '-auth-password', password,
    '-record-dir', recordDir,
    '-syslog-port', String(syslogPort),
    '-geoip-dir', join(dir, 'geoip'),
    '-ip-online-lookup=false',
    // Observe only what the test made: the machine's own sockets would be
    // agent 0 in the alert rules (other jobs' connections as alerts).
    '-host-conns=false',
    '-vault-key-file', join(dir, 'vault.key'),
    '-log-level', 'warn',
    ...(opts.extraArgs ?? []),
  ]
  let args = makeArgs()
  let out = ''
  let child: ChildProcess
  let exited = false
  let url = `http://127.0.0.1:${port}`
  // spawn starts the hub on this directory and port and waits for /readyz.
  const spawnHub = async (): Promise<void> => {
    exited = false
    const c = spawn(bin, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...(opts.env ?? {}) } })
    child = c
    c.stdout?.on('data', (b: Buffer) => (out += b.toString()))
    c.stderr?.on('data', (b: Buffer) => (out += b.toString()))
    c.on('exit', () => {
      if (child === c) exited = true
    })
    const deadline = Date.now() + 30_000
    for (;;) {
      if (exited) throw new Error(`hub exited at start:\n${out}`)
      try {
        const r = await fetch(`${url}/readyz`)
        if (r.ok) break
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) {
        c.kill('SIGKILL')
        throw new Error(`hub not ready in 30 s:\n${out}`)
      }
      await sleep(100)
    }
  }
  // halt stops the hub gracefully (SIGTERM), SIGKILL after 15 s.
  const halt = async (): Promise<void> => {
    if (exited) return
    const gone = new Promise<void>((ok) => child.once('exit', () => ok()))
    child.kill('SIGTERM')
    await Promise.race([gone, sleep(15_000)])
    if (!exited) child.kill('SIGKILL')
  }
  // A port found free can be taken by another process before the hub
  // binds it (other suites run on this machine): pick new ports and retry.
  for (let attempt = 1; ; attempt++) {
    try {
      await spawnHub()
      break
    } catch (e) {
      if (attempt >= 3 || !/address already in use/.test(String(e))) throw e
      port = await freeTcpPort()
      syslogPort = await freeUdpPort()
      url = `http://127.0.0.1:${port}`
      args = makeArgs()
      out = ''
    }
  }
  // a -dev hub serves no console by design (the manual's test starts one)
  const shell = opts.extraArgs?.includes('-dev') ? '<div id="app">' : await (await fetch(`${url}/`)).text()
  if (!shell.includes('<div id="app">')) {
    await halt()
    throw new Error('the hub serves the placeholder page: build the console (make ui) before bin/netmon')
  }
  return {
    url,
    port,
    syslogPort,
    password,
    dir,
    recordDir,
    log: () => out,
    restart: async () => {
      await halt()
      await spawnHub()
    },
    pause: halt,
    resume: spawnHub,
    stop: async () => {
      await halt()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((ok) => setTimeout(ok, ms))
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install -y chromium`)
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  })
}

export interface Watch {
  dialogs: string[]
  cspViolations: string[]
  pageErrors: string[]
}

/**
 * A browser context at 1280x720 that records every dialog (alert, confirm,
 * prompt: XSS), every CSP violation (reported by the page itself) and
 * every uncaught page error.
 */
export async function newWatchedContext(browser: Browser, colorScheme: 'light' | 'dark' = 'light'): Promise<{ ctx: BrowserContext; page: Page; watch: Watch }> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 720 }, colorScheme, acceptDownloads: true })
  await ctx.addInitScript(() => {
    const w = window as unknown as { __csp: string[] }
    w.__csp = []
    document.addEventListener('securitypolicyviolation', (e) => {
      w.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`)
    })
  })
  const watch: Watch = { dialogs: [], cspViolations: [], pageErrors: [] }
  const page = await ctx.newPage()
  page.on('dialog', (d) => {
    watch.dialogs.push(`${d.type()}: ${d.message()}`)
    void d.dismiss()
  })
  page.on('pageerror', (e) => watch.pageErrors.push(process.env.E2E_STACKS ? `${String(e)}\n${e.stack ?? ''}` : String(e)))
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) watch.cspViolations.push(m.text())
  })
  return { ctx, page, watch }
}

/** CSP violations the page recorded itself (securitypolicyviolation). */
export async function pageCsp(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __csp?: string[] }).__csp ?? [])
}

export async function login(page: Page, hub: Hub, username = '', password = hub.password): Promise<void> {
  await page.goto(`${hub.url}/login`)
  if (username) await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password', { exact: true }).fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForURL((u) => !u.pathname.startsWith('/login'))
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screensDir, { recursive: true })
  await page.screenshot({ path: join(screensDir, `${name}.png`), fullPage: true })
}

/** Sets the console's theme (what the toggle stores) and reloads. */
export async function setTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  await page.evaluate((t) => localStorage.setItem('netmon.theme', t), theme)
}

/** UDP datagrams to a loopback port (DNS over lo, syslog). */
export async function sendUdp(port: number, payloads: Buffer[], host = '127.0.0.1'): Promise<void> {
  const s = createSocket('udp4')
  for (const p of payloads) {
    await new Promise<void>((ok, fail) => s.send(p, port, host, (err) => (err ? fail(err) : ok())))
  }
  await new Promise<void>((ok) => s.close(() => ok()))
}

/** A DNS message: one question (A/IN), and A answers when given. */
export function dnsMessage(id: number, name: string, answers: string[] = []): Buffer {
  const response = answers.length > 0
  const header = Buffer.alloc(12)
  header.writeUInt16BE(id, 0)
  header.writeUInt16BE(response ? 0x8180 : 0x0100, 2)
  header.writeUInt16BE(1, 4)
  header.writeUInt16BE(answers.length, 6)
  const labels: Buffer[] = []
  for (const label of name.split('.')) {
    const b = Buffer.from(label, 'utf8')
    if (b.length > 63) throw new Error(`label too long: ${label}`)
    labels.push(Buffer.from([b.length]), b)
  }
  labels.push(Buffer.from([0]))
  const qname = Buffer.concat(labels)
  const question = Buffer.concat([qname, Buffer.from([0, 1, 0, 1])])
  const ans = answers.map((ip) => {
    const rr = Buffer.alloc(16)
    rr.writeUInt16BE(0xc00c, 0) // pointer to the question name
    rr.writeUInt16BE(1, 2) // A
    rr.writeUInt16BE(1, 4) // IN
    rr.writeUInt32BE(60, 6) // TTL
    rr.writeUInt16BE(4, 10)
    ip.split('.').forEach((o, i) => rr.writeUInt8(Number(o), 12 + i))
    return rr
  })
  return Buffer.concat([header, question, ...ans])
}

/** Loopback traffic for the capture: fetches the hub itself n times. */
export async function loopbackTraffic(hub: Hub, n: number): Promise<void> {
  const batch = Array.from({ length: n }, () =>
    fetch(`${hub.url}/api/openapi.json`)
      .then((r) => r.arrayBuffer())
      .catch(() => undefined),
  )
  await Promise.all(batch)
}
