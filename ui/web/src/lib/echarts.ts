// ECharts, tree-shaken: only the charts and components the console uses
// are registered, so the bundle stays small.
import * as echarts from 'echarts/core'
import { BarChart, LineChart, PieChart } from 'echarts/charts'
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components'
import { CanvasRenderer } from 'echarts/renderers'

echarts.use([LineChart, BarChart, PieChart, GridComponent, TooltipComponent, LegendComponent, CanvasRenderer])

export { echarts }
export type { EChartsCoreOption } from 'echarts/core'
