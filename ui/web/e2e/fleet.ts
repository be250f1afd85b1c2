// A simulated netmon agent speaking the real agent protocol over HTTP
// (agentmode/wire): hello with an enroll secret (X-Enroll-Token), then
// telemetry batches with increasing seq and ts and cumulative interface
// counters that grow at fixed byte rates, so the hub computes exact rates.
// The wire shapes are the generated ones of the hub's OpenAPI document.
import type { components } from '../src/api/openapi'

type S = components['schemas']

/** The deep collection sections of a batch (spec 2.9: processes, l7, dns deltas). */
export type DeepSections = Pick<S['TelemetryBatch'], 'processes' | 'l7' | 'dns'>

/** A socket as an agent reports it (agentmode/wire Connection). */
export type SimConnection = S['AgentConnection']

export interface SimInterface {
  name: string
  /** bytes per second the counters grow by */
  rxRate: number
  txRate: number
  /** packets per second, each direction */
  ppsRate: number
}

export interface SimAgentOptions {
  name: string
  machineId: string
  site?: string
  version?: string
  interfaces: SimInterface[]
  connections: SimConnection[]
}

type Counters = Omit<S['AgentInterface'], 'name'>

export interface HelloAnswer {
  status: number
  /** the hello answer, or the error body of a refusal */
  body: Partial<S['AgentHelloResponse']> & { error?: string }
}

/** POST /api/v1/agent/hello with the given enroll secret. */
export async function hello(hubUrl: string, secret: string, body: Partial<S['AgentHello']>): Promise<HelloAnswer> {
  const r = await fetch(`${hubUrl}/api/v1/agent/hello`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Enroll-Token': secret },
    body: JSON.stringify({ version: 'e2e-1.0.0', protocol_version: 1, os: 'linux', arch: 'amd64', ...body }),
  })
  return { status: r.status, body: (await r.json().catch(() => ({}))) as HelloAnswer['body'] }
}

export class SimAgent {
  id = 0
  token = ''
  seq = 0
  lastTs = 0
  /** HTTP status of the last telemetry batch */
  lastStatus = 0
  sent = 0
  private counters = new Map<string, Counters>()
  private running = false
  private loop: Promise<void> | null = null

  constructor(
    private readonly hubUrl: string,
    readonly opts: SimAgentOptions,
  ) {
    for (const i of opts.interfaces) this.counters.set(i.name, { rx_bytes: 1_000_000, tx_bytes: 500_000, rx_packets: 1000, tx_packets: 800 })
  }

  /** Enrolls with secret; throws unless the hub accepts. */
  async enroll(secret: string): Promise<void> {
    const a = await hello(this.hubUrl, secret, { name: this.opts.name, site: this.opts.site ?? '', machine_id: this.opts.machineId, version: this.opts.version ?? 'e2e-1.0.0' })
    if (a.status !== 200 || !a.body.agent_token || !a.body.agent_id) throw new Error(`hello refused: ${a.status} ${JSON.stringify(a.body)}`)
    this.id = a.body.agent_id
    this.token = a.body.agent_token
  }

  /**
   * Sends one batch taken at ts (default now). ts is strictly increasing
   * (one second or more past the last), so the hub always has an interval
   * to compute rates over; the counters grow by rate × factor × elapsed
   * seconds. deep, when given, rides along as the batch's deep collection
   * sections (deltas since the previous batch).
   */
  async send(at?: number, factor = 1, deep: DeepSections = {}): Promise<number> {
    const ts = Math.max(this.lastTs + 1, at ?? Math.round(Date.now() / 1000))
    const dt = this.lastTs ? ts - this.lastTs : 0
    const interfaces = this.opts.interfaces.map((i) => {
      const c = this.counters.get(i.name)!
      c.rx_bytes += Math.round(i.rxRate * factor * dt)
      c.tx_bytes += Math.round(i.txRate * factor * dt)
      c.rx_packets += Math.round(i.ppsRate * factor * dt)
      c.tx_packets += Math.round(i.ppsRate * factor * dt)
      return { name: i.name, ...c }
    })
    this.seq++
    const body: S['TelemetryBatch'] = {
      ts,
      seq: this.seq,
      interfaces,
      connections: this.opts.connections,
      attr_method: 'pcap',
      attr_iface: this.opts.interfaces[0]?.name ?? '',
      version: this.opts.version ?? 'e2e-1.0.0',
      ...deep,
    }
    const r = await fetch(`${this.hubUrl}/api/v1/agent/telemetry`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.token}` },
      body: JSON.stringify(body),
    })
    await r.arrayBuffer()
    this.lastStatus = r.status
    if (r.ok) {
      this.lastTs = ts
      this.sent++
    }
    return r.status
  }

  /**
   * Sends n batches dated step seconds apart and ending step seconds ago,
   * with rates that swing around the configured ones: a history to chart.
   * Throws unless the hub takes each.
   */
  async backfill(n: number, step: number): Promise<void> {
    const now = Math.round(Date.now() / 1000)
    for (let i = 0; i < n; i++) {
      const status = await this.send(now - (n - i) * step, 1 + 0.6 * Math.sin(i / 3))
      if (status !== 200) throw new Error(`backfill batch ${i}: HTTP ${status}`)
    }
  }

  /** Sends a batch about every second (the hub runs -agent-interval 1) until stop() or a refusal. */
  start(): void {
    if (this.running) return
    this.running = true
    this.loop = (async () => {
      while (this.running) {
        const status = await this.send().catch(() => 0)
        if (status === 401) break // deleted: its token no longer works
        await new Promise((ok) => setTimeout(ok, 1000))
      }
      this.running = false
    })()
  }

  async stop(): Promise<void> {
    this.running = false
    await this.loop
  }
}
