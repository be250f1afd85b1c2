/** A series of a uPlot chart. */
export interface UplotSeries {
  label: string
  /** index into the theme palette */
  color: number
}
