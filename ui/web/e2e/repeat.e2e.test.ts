// A port event's count against a real hub (SQLite) with the engine's
// loops running every 5 s: it counts the agent's batches that showed the
// connection, not the cycles in between (each cycle used to evaluate the
// agent's last inventory again, so the count grew every 5 s).
import { afterAll, beforeAll, expect, test } from 'vitest'
import { request, type APIRequestContext } from 'playwright-core'
import { sleep, startHub, type Hub } from './hub'
import { SimAgent } from './fleet'

const TOKEN = 'e2e-static-enroll-token-repeat-0123456'
let hub: Hub
let api: APIRequestContext

beforeAll(async () => {
  hub = await startHub({ extraArgs: ['-enroll-token', TOKEN, '-agent-interval', '1'] })
  api = await request.newContext({ baseURL: hub.url, extraHTTPHeaders: { Origin: hub.url } })
  expect((await api.post('/api/login', { data: { password: hub.password } })).status()).toBe(200)
}, 60_000)

afterAll(async () => {
  await api?.dispose()
  await hub?.stop()
})

async function portCounts(): Promise<number[]> {
  const r = await api.get('/api/v1/alerts/events?kind=port&limit=10')
  expect(r.status()).toBe(200)
  return ((await r.json()) as { events: { count: number }[] }).events.map((e) => e.count)
}

async function inventoryCycles(): Promise<number> {
  const m = await (await api.get('/metrics')).text()
  const line = m.split('\n').find((l) => l.startsWith('netmon_alerting_eval_seconds_count{cadence="inventory"}'))
  return Number(line?.split(' ')[1] ?? 0)
}

async function waitCycles(n: number): Promise<void> {
  const start = await inventoryCycles()
  const end = Date.now() + (n + 2) * 5000 + 5000
  while ((await inventoryCycles()) < start + n) {
    if (Date.now() > end) throw new Error(`fewer than ${n} inventory cycles; hub log:\n${hub.log().slice(-3000)}`)
    await sleep(250)
  }
}

test('two batches count two, however many cycles run', async () => {
  const put = await api.put('/api/alerts', { data: { enabled: true, ports: { enabled: true, ports: [4444] } } })
  expect(put.status()).toBe(200)
  const agent = new SimAgent(hub.url, {
    name: 'e2e-repeat', machineId: 'e2e-machine-repeat', interfaces: [{ name: 'eth0', rxRate: 1000, txRate: 1000, ppsRate: 10 }],
    connections: [{ proto: 'tcp', local_addr: '10.0.0.7:50000', remote_addr: '198.51.100.7:4444', status: 'ESTABLISHED', pid: 101, process: 'curl' }],
  })
  await agent.enroll(TOKEN)
  await agent.send()
  await expect.poll(portCounts, { timeout: 15_000, interval: 250 }).toEqual([1])
  await waitCycles(2)
  expect(await portCounts()).toEqual([1])
  await agent.send()
  await expect.poll(portCounts, { timeout: 15_000, interval: 250 }).toEqual([2])
  await waitCycles(2)
  expect(await portCounts()).toEqual([2])
}, 90_000)
