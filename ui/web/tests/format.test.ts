import { describe, expect, test } from 'vitest'
import {
  formatAbsolute,
  formatBits,
  formatBytes,
  formatCount,
  formatDuration,
  formatPps,
  formatRelative,
  hostPort,
  protoName,
  severityName,
  visibleParts,
  visibleText,
} from '../src/lib/format'

describe('formatBits (SI prefixes)', () => {
  test.each([
    [0, '0 bit/s'],
    [999, '999 bit/s'],
    [1000, '1.00 kbit/s'],
    [1234, '1.23 kbit/s'],
    [12_345, '12.3 kbit/s'],
    [123_456, '123 kbit/s'],
    [1_234_000, '1.23 Mbit/s'],
    [10_000_000_000, '10.0 Gbit/s'],
    [2.5e15, '2.50 Pbit/s'],
    [NaN, '0 bit/s'],
    [undefined, '0 bit/s'],
  ])('%s -> %s', (v, want) => expect(formatBits(v as number)).toBe(want))
})

describe('formatBytes (binary prefixes)', () => {
  test.each([
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.00 KiB'],
    [1536, '1.50 KiB'],
    [10 * 1024 * 1024, '10.0 MiB'],
    [5.5 * 1024 ** 3, '5.50 GiB'],
    [200 * 1024 ** 4, '200 TiB'],
    [null, '0 B'],
  ])('%s -> %s', (v, want) => expect(formatBytes(v as number)).toBe(want))
})

test('counts and packets are grouped', () => {
  expect(formatCount(1234567)).toBe('1,234,567')
  expect(formatCount(12.6)).toBe('13')
  expect(formatPps(2500)).toBe('2,500 pps')
})

describe('relative and absolute times', () => {
  const now = Date.UTC(2026, 0, 2, 15, 4, 5)
  const ts = now / 1000
  test.each([
    [ts, 'just now'],
    [ts - 30, '30 s ago'],
    [ts - 300, '5 min ago'],
    [ts - 7200, '2 h ago'],
    [ts - 3 * 86400, '3 d ago'],
    [ts + 120, 'in 2 min'],
    [0, 'never'],
  ])('%s', (t, want) => expect(formatRelative(t, now)).toBe(want))

  test('absolute time is local (TZ=UTC in the tests)', () => {
    expect(formatAbsolute(ts)).toBe('2026-01-02 15:04:05')
    expect(formatAbsolute(0)).toBe('never')
  })
})

test('durations', () => {
  expect(formatDuration(42)).toBe('42 s')
  expect(formatDuration(125)).toBe('2 min 05 s')
  expect(formatDuration(3900)).toBe('1 h 05 min')
  expect(formatDuration(90000)).toBe('1 d 1 h')
})

describe('visible text of untrusted strings', () => {
  test('markup is kept as text, unchanged', () => {
    const s = '<img src=x onerror=alert(1)>.evil.test'
    expect(visibleText(s)).toBe(s)
    expect(visibleParts(s)).toEqual([{ text: s, control: false }])
  })

  test('bidi overrides and controls become visible markers', () => {
    expect(visibleParts('\u202Egnp.exe')).toEqual([
      { text: 'U+202E', control: true },
      { text: 'gnp.exe', control: false },
    ])
    expect(visibleText('a\u0000b\u200Bc\u2066d')).toBe('a[U+0000]b[U+200B]c[U+2066]d')
    expect(visibleText('tab\tand\nnewline')).toBe('tab\tand\nnewline')
    expect(visibleText(null)).toBe('')
  })
})

test('protocol names, host:port and severities', () => {
  expect(protoName(6)).toBe('TCP')
  expect(protoName(17)).toBe('UDP')
  expect(protoName(99)).toBe('99')
  expect(hostPort('10.0.0.1', 443)).toBe('10.0.0.1:443')
  expect(hostPort('2001:db8::1', 53)).toBe('[2001:db8::1]:53')
  expect(hostPort('10.0.0.1', 0)).toBe('10.0.0.1')
  expect(severityName(0)).toBe('emerg')
  expect(severityName(7)).toBe('debug')
})
