// Series of the console's time charts (components/TimeChart.vue) and the
// legend figures computed from them.

/** A series of a time chart. */
export interface ChartSeries {
  label: string
  /** index into the theme palette */
  color: number
  /** drawn below the axis (Out, as ntopng draws upload) */
  mirror?: boolean
  /** off until switched on in the legend (Local) */
  hidden?: boolean
  /** dashed, no fill: a comparison series (yesterday) */
  dash?: boolean
}

/** Legend figures of one series. */
export interface SeriesStats {
  last: number
  min: number
  max: number
  avg: number
  /** points that counted */
  count: number
}

/**
 * last, min, max and average of ys over the points whose x is within
 * [from, to]; nulls (gaps) are skipped.
 */
export function seriesStats(xs: ArrayLike<number>, ys: ArrayLike<number | null>, from = -Infinity, to = Infinity): SeriesStats {
  let count = 0
  let sum = 0
  let min = Infinity
  let max = -Infinity
  let last = 0
  for (let i = 0; i < xs.length; i++) {
    const v = ys[i]
    if (v == null || !Number.isFinite(v) || xs[i] < from || xs[i] > to) continue
    count++
    sum += v
    min = Math.min(min, v)
    max = Math.max(max, v)
    last = v
  }
  if (!count) return { last: 0, min: 0, max: 0, avg: 0, count: 0 }
  return { last, min, max, avg: sum / count, count }
}

/**
 * What a chart's values measure, which fixes its y-axis: bits (bit/s,
 * at least 1 kbit/s tall so a quiet link reads), percent (0-100, taller
 * only when a value is above 100), ms and count (from 0 to a round value
 * above the largest point). One 0-1000 axis for all of them drew a CPU at
 * 70% as a flat line.
 */
export type ChartUnit = 'bits' | 'percent' | 'ms' | 'count'

/** The smallest of 1, 2, 2.5, 5 times a power of ten that is >= v (> 0). */
export function niceCeil(v: number): number {
  if (!(v > 0) || !Number.isFinite(v)) return 1
  const p = Math.pow(10, Math.floor(Math.log10(v)))
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v * (1 - 1e-12)) return m * p
  return 10 * p
}

/**
 * The y range of a chart of unit over data from min to max; mirror puts
 * zero in the middle (Out below the axis) with the same height each side.
 */
export function yRange(unit: ChartUnit, min: number | null, max: number | null, mirror: boolean): [number, number] {
  const hi = Math.max(0, max ?? 0)
  const lo = Math.min(0, min ?? 0)
  const top = Math.max(hi, -lo)
  let m: number
  switch (unit) {
    case 'percent':
      m = top <= 100 ? 100 : niceCeil(top * 1.05)
      break
    case 'ms':
    case 'count':
      m = niceCeil(Math.max(top * 1.1, 1))
      break
    default:
      // at least 1 kbit/s: a quiet link gets readable ticks
      m = top < 1000 ? 1000 : top * 1.1
  }
  return mirror ? [-m, m] : [0, m]
}

/** Tick steps of a count axis: whole numbers only. */
export const COUNT_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 2.5e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12]
