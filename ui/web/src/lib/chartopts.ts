// ECharts option builders shared by the views: theme colours, escaped HTML
// tooltips (lib/tooltips), no animation on data that updates every second.
import type { EChartsCoreOption } from './echarts'
import type { Palette } from './palette'
import { categoryTooltip, endpointTooltip, pieTooltip, timeSeriesTooltip, type EndpointDatum } from './tooltips'
import type { Endpoint } from '../api/types'

export interface SeriesSpec {
  name: string
  /** palette index */
  color: number
  data: number[]
  /** area fill under the line */
  area?: boolean
}

function tooltipBase(p: Palette) {
  return {
    backgroundColor: p.tooltipBg,
    borderColor: p.tooltipBorder,
    textStyle: { color: p.text },
    className: 'echart-tooltip',
    // confine also keeps ECharts from adding its arrow, a <div style=…>
    // the CSP would refuse.
    confine: true,
  }
}

function axisBase(p: Palette) {
  return {
    axisLine: { lineStyle: { color: p.axis } },
    axisTick: { lineStyle: { color: p.axis } },
    axisLabel: { color: p.muted },
    splitLine: { lineStyle: { color: p.grid } },
  }
}

/** A time series chart; x are Unix seconds. */
export function timeSeriesOption(
  p: Palette,
  x: number[],
  series: SeriesSpec[],
  fmt: (v: number) => string,
  /** [from, to] in Unix seconds: the axis spans the whole window asked for */
  window?: [number, number],
): EChartsCoreOption {
  return {
    animation: false,
    color: p.series,
    grid: { left: 8, right: 16, top: 36, bottom: 8, containLabel: true },
    legend: { top: 0, textStyle: { color: p.text }, data: series.map((s) => s.name) },
    tooltip: { ...tooltipBase(p), trigger: 'axis', formatter: timeSeriesTooltip(fmt) },
    xAxis: {
      type: 'time',
      ...axisBase(p),
      splitLine: { show: false },
      min: window ? window[0] * 1000 : undefined,
      max: window ? window[1] * 1000 : undefined,
    },
    yAxis: { type: 'value', ...axisBase(p), axisLabel: { color: p.muted, formatter: (v: number) => fmt(v) } },
    series: series.map((s) => ({
      name: s.name,
      type: 'line',
      showSymbol: x.length < 3,
      sampling: 'lttb',
      lineStyle: { width: 1.5, color: p.series[s.color] },
      itemStyle: { color: p.series[s.color] },
      areaStyle: s.area ? { opacity: 0.08, color: p.series[s.color] } : undefined,
      data: x.map((t, i) => [t * 1000, s.data[i] ?? 0]),
    })),
  }
}

/** Grouped bars over a category axis (hours, days). */
export function categoryBarOption(
  p: Palette,
  categories: string[],
  series: SeriesSpec[],
  fmt: (v: number) => string,
  titleFmt?: (c: string) => string,
): EChartsCoreOption {
  return {
    animation: false,
    color: p.series,
    grid: { left: 8, right: 16, top: 36, bottom: 8, containLabel: true },
    legend: { top: 0, textStyle: { color: p.text }, data: series.map((s) => s.name) },
    tooltip: { ...tooltipBase(p), trigger: 'axis', axisPointer: { type: 'shadow' }, formatter: categoryTooltip(fmt, titleFmt) },
    xAxis: { type: 'category', data: categories, ...axisBase(p), splitLine: { show: false } },
    yAxis: { type: 'value', ...axisBase(p), axisLabel: { color: p.muted, formatter: (v: number) => fmt(v) } },
    series: series.map((s) => ({
      name: s.name,
      type: 'bar',
      itemStyle: { color: p.series[s.color] },
      data: s.data,
    })),
  }
}

/** A donut of named counts. */
export function pieOption(p: Palette, items: { name: string; value: number }[], fmt: (v: number) => string): EChartsCoreOption {
  return {
    animation: false,
    color: p.series,
    tooltip: { ...tooltipBase(p), trigger: 'item', formatter: pieTooltip(fmt) },
    legend: { type: 'scroll', orient: 'vertical', right: 0, top: 'middle', textStyle: { color: p.text } },
    series: [
      {
        type: 'pie',
        radius: ['45%', '75%'],
        center: ['35%', '50%'],
        avoidLabelOverlap: true,
        label: { show: false },
        itemStyle: { borderColor: p.tooltipBg, borderWidth: 1 },
        data: items,
      },
    ],
  }
}

/** Horizontal bars of the top endpoints by bytes; labels are addresses,
 * the hostname (untrusted) appears in the escaped tooltip only. */
export function endpointBarOption(p: Palette, eps: Endpoint[], fmt: (v: number) => string): EChartsCoreOption {
  const top = eps.slice(0, 10).reverse()
  const data: EndpointDatum[] = top.map((e) => ({
    value: e.total,
    ip: e.ip,
    hostname: e.hostname,
    country: e.country,
    asn: e.asn,
    local: e.local,
  }))
  return {
    animation: false,
    grid: { left: 8, right: 24, top: 8, bottom: 8, containLabel: true },
    // axis trigger: hovering anywhere on a row shows it, even a short bar
    tooltip: { ...tooltipBase(p), trigger: 'axis', axisPointer: { type: 'shadow' }, formatter: endpointTooltip(fmt) },
    xAxis: { type: 'value', ...axisBase(p), axisLabel: { color: p.muted, formatter: (v: number) => fmt(v) } },
    yAxis: { type: 'category', data: top.map((e) => e.ip), ...axisBase(p), splitLine: { show: false } },
    series: [{ type: 'bar', itemStyle: { color: p.series[0] }, data }],
  }
}
