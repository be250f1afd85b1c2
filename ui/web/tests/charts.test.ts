// Legend figures, 24-hour axis labels, host addresses and paging: the
// helpers behind the charts, host links and bounded tables.
import { expect, test } from 'vitest'
import { ref } from 'vue'
import { niceCeil, seriesStats, yRange } from '../src/lib/series'
import { axisTime, clock, utcOffset, windowMinutes, zoneLabel } from '../src/lib/time'
import { hostOf, isIP } from '../src/lib/hosts'
import { usePaged } from '../src/lib/paging'

test('seriesStats: last, min, max and average inside the window, gaps skipped', () => {
  const xs = [10, 20, 30, 40, 50]
  const ys = [5, null, 1, 9, 3]
  expect(seriesStats(xs, ys)).toEqual({ last: 3, min: 1, max: 9, avg: 4.5, count: 4 })
  expect(seriesStats(xs, ys, 25, 45)).toEqual({ last: 9, min: 1, max: 9, avg: 5, count: 2 })
  expect(seriesStats(xs, [null, null, null, null, null]).count).toBe(0)
  expect(seriesStats([], []).count).toBe(0)
})

test('24-hour clock on axes: seconds for short spans, dates at midnight and for long ones', () => {
  const d = new Date(2026, 0, 2, 15, 4, 5)
  const ts = d.getTime() / 1000
  expect(clock(ts)).toBe('15:04:05')
  expect(clock(ts, false)).toBe('15:04')
  expect(axisTime(ts, 120)).toBe('15:04:05')
  expect(axisTime(ts, 3600)).toBe('15:04')
  expect(axisTime(new Date(2026, 0, 2, 0, 0, 0).getTime() / 1000, 86400)).toBe('01-02')
  expect(axisTime(ts, 7 * 86400)).toBe('01-02 15:04')
  expect(utcOffset()).toMatch(/^[+-]\d\d:\d\d$/)
  expect(zoneLabel()).toMatch(/UTC/)
  // no AM/PM anywhere
  for (let h = 0; h < 24; h++) expect(clock(new Date(2026, 0, 2, h).getTime() / 1000)).not.toMatch(/[AP]M/i)
})

test('isIP and hostOf: addresses only, ports and brackets taken off', () => {
  for (const ok of ['192.0.2.1', '10.0.0.255', '::1', '2001:db8::1', 'fe80::1']) expect(isIP(ok), ok).toBe(true)
  for (const bad of ['', '*', '256.1.1.1', '1.2.3', 'example.com', '<img src=x>', '192.0.2.1:80', 'gggg::1']) expect(isIP(bad), bad).toBe(false)
  expect(hostOf('198.51.100.4:51000')).toBe('198.51.100.4')
  expect(hostOf('[2001:db8::1]:443')).toBe('2001:db8::1')
  expect(hostOf('2001:db8::1')).toBe('2001:db8::1')
  expect(hostOf('')).toBe('')
})

test('usePaged: bounded pages, a range label, the page kept in range as rows shrink', () => {
  const rows = ref(Array.from({ length: 60 }, (_, i) => i))
  const p = usePaged(rows, 25)
  expect(p.pages.value).toBe(3)
  expect(p.rows.value).toHaveLength(25)
  expect(p.range.value).toBe('1–25 of 60')
  p.page.value = 3
  expect(p.rows.value).toEqual([50, 51, 52, 53, 54, 55, 56, 57, 58, 59])
  expect(p.range.value).toBe('51–60 of 60')
  rows.value = rows.value.slice(0, 10)
  return new Promise<void>((ok) =>
    setTimeout(() => {
      expect(p.page.value).toBe(1)
      expect(p.rows.value).toHaveLength(10)
      ok()
    }),
  )
})

test('yRange: each unit its own axis (a CPU at 70% is no flat line on 0-1000)', () => {
  expect(yRange('percent', 0, 70, false)).toEqual([0, 100])
  expect(yRange('percent', 0, 0, false)).toEqual([0, 100])
  expect(yRange('percent', 0, 130, false)).toEqual([0, 200]) // above 100 (a counter wrap) still fits
  expect(yRange('percent', -40, 70, true)).toEqual([-100, 100])
  expect(yRange('ms', 0, 12.5, false)).toEqual([0, 20])
  expect(yRange('ms', 0, 0.2, false)).toEqual([0, 1])
  expect(yRange('count', 0, 1834, false)).toEqual([0, 2500])
  expect(yRange('count', 0, 3, false)).toEqual([0, 5])
  expect(yRange('count', null, null, false)).toEqual([0, 1])
  expect(yRange('bits', 0, 10, false)).toEqual([0, 1000])
  expect(yRange('bits', -5, 10, true)).toEqual([-1000, 1000])
  expect(yRange('bits', 0, 1e6, false)).toEqual([0, 1.1e6])
  expect(niceCeil(0.7)).toBeCloseTo(1)
  expect(niceCeil(11)).toBe(20)
  expect(niceCeil(25)).toBe(25)
  expect(niceCeil(2001)).toBe(2500)
})

test('windowMinutes reads the hub\'s window names', () => {
  expect(['15m', '1h', '6h', '24h', '3d', '', '1w', 'h'].map(windowMinutes)).toEqual([15, 60, 360, 1440, 4320, 0, 0, 0])
})
