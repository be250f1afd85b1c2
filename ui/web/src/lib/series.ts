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
