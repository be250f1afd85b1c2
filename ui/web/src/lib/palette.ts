// Series colours per theme for the uPlot charts (canvas charts
// cannot read CSS classes). styles/base.css defines the same colours as
// .dot-0 … .dot-5 for the tooltip markers.
import type { Theme } from '../stores/theme'

export interface Palette {
  series: string[]
  text: string
  muted: string
  grid: string
  axis: string
  tooltipBg: string
  tooltipBorder: string
}

const LIGHT: Palette = {
  series: ['#1f6feb', '#d1242f', '#1a7f37', '#8250df', '#bc4c00', '#0a7b83'],
  text: '#1f2328',
  muted: '#59636e',
  grid: '#d8dee4',
  axis: '#8c959f',
  tooltipBg: '#ffffff',
  tooltipBorder: '#d0d7de',
}

const DARK: Palette = {
  series: ['#4493f8', '#f85149', '#3fb950', '#ab7df8', '#db6d28', '#39c5cf'],
  text: '#e6edf3',
  muted: '#9198a1',
  grid: '#30363d',
  axis: '#6e7681',
  tooltipBg: '#161b22',
  tooltipBorder: '#3d444d',
}

export function palette(theme: Theme): Palette {
  return theme === 'dark' ? DARK : LIGHT
}
