// The process pages' helpers: the detail path escapes a name as one
// segment, and the unattributed reasons of several agents sum by reason.
import { expect, test } from 'vitest'
import { processPath, sumReasons, UNATTRIBUTED } from '../src/lib/processes'

test('processPath: one escaped segment, slashes and markup included', () => {
  expect(processPath(7, 'curl')).toBe('/api/v1/agents/7/processes/curl')
  expect(processPath(7, 'kworker/u8:2')).toBe('/api/v1/agents/7/processes/kworker%2Fu8%3A2')
  expect(processPath(7, UNATTRIBUTED)).toBe('/api/v1/agents/7/processes/(unattributed)')
  expect(processPath(3, '<img src=x onerror=alert(1)>')).toBe('/api/v1/agents/3/processes/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E')
  expect(processPath(3, '\u202Efdp.exe')).toBe('/api/v1/agents/3/processes/%E2%80%AEfdp.exe')
})

test('sumReasons: summed per reason over agents, most bytes first, ties by name', () => {
  expect(
    sumReasons([
      [
        { reason: 'process gone', bytes: 6144, packets: 6 },
        { reason: 'other network namespace', bytes: 2048, packets: 2 },
      ],
      [{ reason: 'process gone', bytes: 1000, packets: 1 }],
      [],
      [{ reason: 'kernel socket', bytes: 2048, packets: 9 }],
    ]),
  ).toEqual([
    { reason: 'process gone', bytes: 7144, packets: 7 },
    { reason: 'kernel socket', bytes: 2048, packets: 9 },
    { reason: 'other network namespace', bytes: 2048, packets: 2 },
  ])
  expect(sumReasons([])).toEqual([])
})
