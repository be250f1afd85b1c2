import { describe, expect, test } from 'vitest'
import { escapeHtml } from '../src/lib/escape'
import { categoryTooltip, endpointTooltip, pieTooltip, timeSeriesTooltip } from '../src/lib/tooltips'
import { categoryBarOption, endpointBarOption, pieOption, timeSeriesOption } from '../src/lib/chartopts'
import { palette } from '../src/lib/palette'
import { formatBits, formatBytes } from '../src/lib/format'

const HOSTILE = `<img src=x onerror=alert(1)>"'&\``

function noMarkup(html: string): void {
  // the only tags are the formatter's own
  const tags = html.match(/<[a-z]+[^>]*>/g) ?? []
  for (const t of tags) expect(t).toMatch(/^<(div|span) class="[a-z0-9 -]+">$/)
  expect(html).not.toContain('style=')
  expect(html).not.toContain('<img')
}

test('escapeHtml escapes every markup character', () => {
  expect(escapeHtml(HOSTILE)).toBe('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;&#96;')
  expect(escapeHtml(null)).toBe('')
  expect(escapeHtml(42)).toBe('42')
})

describe('tooltip formatters escape what the hub sent', () => {
  test('endpoint tooltip', () => {
    const html = endpointTooltip(formatBytes)([{ value: 2048, data: { value: 2048, ip: '127.0.0.7', hostname: HOSTILE, country: '<b>', asn: 'AS1', local: true } }])
    noMarkup(html)
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;')
    expect(html).toContain('&lt;b&gt; · AS1 · local')
    expect(html).toContain('2.00 KiB')
  })

  test('an RTL override in a hostname is shown as a marker', () => {
    const html = endpointTooltip(formatBytes)({ value: 1, data: { value: 1, ip: '1.2.3.4', hostname: '\u202Egnp.exe', country: '', asn: '', local: false } })
    expect(html).toContain('[U+202E]gnp.exe')
    expect(html).not.toContain('\u202E')
  })

  test('time series, category and pie tooltips', () => {
    const ts = timeSeriesTooltip(formatBits)([{ seriesName: HOSTILE, seriesIndex: 1, value: [1_700_000_000_000, 8000] }])
    noMarkup(ts)
    expect(ts).toContain('8.00 kbit/s')
    const cat = categoryTooltip(formatBits)([{ seriesName: 'In', seriesIndex: 0, value: 1e6, axisValueLabel: HOSTILE }])
    noMarkup(cat)
    expect(cat).toContain('1.00 Mbit/s')
    const pie = pieTooltip(String)({ name: HOSTILE, value: 3, percent: 75, dataIndex: 2 })
    noMarkup(pie)
    expect(pie).toContain('75.0%')
  })
})

describe('chart options', () => {
  const p = palette('dark')
  test('every tooltip is confined (no arrow element) and formatted by us', () => {
    const opts = [
      timeSeriesOption(p, [1, 2], [{ name: 'In', color: 0, data: [1, 2] }], formatBits),
      categoryBarOption(p, ['00:00'], [{ name: 'In', color: 0, data: [1] }], formatBits),
      pieOption(p, [{ name: 'TCP', value: 1 }], String),
      endpointBarOption(p, [{ ip: '1.1.1.1', hostname: HOSTILE, local: false, country: '', asn: '', in: 1, out: 1, total: 2, packets: 1 }], formatBytes),
    ] as { tooltip: { confine: boolean; formatter: unknown } }[]
    for (const o of opts) {
      expect(o.tooltip.confine).toBe(true)
      expect(typeof o.tooltip.formatter).toBe('function')
    }
  })

  test('time series x values are milliseconds', () => {
    const o = timeSeriesOption(p, [10], [{ name: 'In', color: 0, data: [5] }], formatBits) as { series: { data: number[][] }[] }
    expect(o.series[0].data).toEqual([[10_000, 5]])
  })

  test('endpoint bars keep the top 10, largest at the top', () => {
    const eps = Array.from({ length: 15 }, (_, i) => ({ ip: `10.0.0.${i}`, hostname: '', local: true, country: '', asn: '', in: 0, out: 0, total: 100 - i, packets: 1 }))
    const o = endpointBarOption(p, eps, formatBytes) as { yAxis: { data: string[] } }
    expect(o.yAxis.data).toHaveLength(10)
    expect(o.yAxis.data.at(-1)).toBe('10.0.0.0')
  })
})
