package render

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"netmon/app/reports/model"
)

// Chart geometry, in abstract units: the SVG uses them as its viewBox
// and the PDF scales them to the page width, so both draw one layout.
const (
	chartW       = 720.0
	chartPlotH   = 190.0
	chartPadTop  = 10.0
	chartPadLeft = 70.0 // room for the y tick labels
	chartPadRt   = 12.0
	chartXAxisH  = 26.0 // x labels under the plot
	chartFont    = 10.0 // tick and legend font size
	chartLegendH = 16.0 // one legend row
	charWidth    = 0.56 // average glyph width / font size, to estimate text widths
	// maxChartPoints bounds a chart's labels: a longer series is cut and
	// the title says so, so a hostile model cannot make a huge drawing.
	maxChartPoints = 400
)

// palette colours series in order (colour-blind safe, prints in grey
// scale with distinct lightness).
var palette = [...]string{"#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#64748b", "#ec4899", "#0ea5e9"}

// chartLayout is a chart computed once: axis scale, ticks, and every bar
// and point in chart units (y grows downwards, as in SVG and fpdf).
type chartLayout struct {
	Title  string
	W, H   float64
	X0, Y0 float64 // plot's top-left
	X1, Y1 float64 // plot's bottom-right
	YTicks []tick
	XTicks []tick // thinned labels under the plot
	Bars   []bar
	Lines  []polyline
	Legend []legendItem
	Font   float64
}

type tick struct {
	Pos   float64 // y for YTicks, x (centre) for XTicks
	Label string
}

type bar struct {
	X, Y, W, H float64
	Color      string
	Tip        string // "label · series: value"
}

type polyline struct {
	Color  string
	Points []point
}

type point struct{ X, Y float64 }

type legendItem struct {
	X, Y  float64 // swatch top-left; the name follows at X+14
	Color string
	Name  string
}

// textWidth estimates the width of s at size font; both renderers use the
// estimate, so the layout does not depend on a font's metrics.
func textWidth(s string, font float64) float64 {
	return float64(utf8.RuneCountInString(s)) * font * charWidth
}

// layoutChart computes the layout of c. Non-finite values count as 0 in
// bars and break a line; negative values are clamped to 0 in stacked bars
// (a stack of traffic is never negative).
func layoutChart(c *model.Chart) chartLayout {
	l := chartLayout{Title: c.Title, W: chartW, Font: chartFont}
	labels := c.Labels
	if len(labels) > maxChartPoints {
		l.Title += " (first " + strconv.Itoa(maxChartPoints) + " of " + strconv.Itoa(len(labels)) + " points)"
		labels = labels[:maxChartPoints]
	}
	n := len(labels) // values past the labels are not drawn

	// Legend first: its rows decide the height.
	x, rows := 0.0, 0
	if len(c.Series) > 0 {
		rows = 1
	}
	for i, s := range c.Series {
		w := 14 + textWidth(s.Name, chartFont) + 16
		if x > 0 && chartPadLeft+x+w > chartW-chartPadRt {
			x, rows = 0, rows+1
		}
		l.Legend = append(l.Legend, legendItem{X: chartPadLeft + x, Y: float64(rows - 1), Color: palette[i%len(palette)], Name: s.Name})
		x += w
	}
	l.X0, l.Y0 = chartPadLeft, chartPadTop
	l.X1, l.Y1 = chartW-chartPadRt, chartPadTop+chartPlotH
	legendTop := l.Y1 + chartXAxisH
	for i := range l.Legend {
		l.Legend[i].Y = legendTop + l.Legend[i].Y*chartLegendH
	}
	l.H = legendTop + float64(rows)*chartLegendH + 4

	value := func(s model.Series, i int) (float64, bool) {
		if i >= len(s.Values) || math.IsNaN(s.Values[i]) || math.IsInf(s.Values[i], 0) {
			return 0, false
		}
		return s.Values[i], true
	}
	// Domain.
	lo, hi := 0.0, 0.0
	for i := 0; i < n; i++ {
		sum := 0.0
		for _, s := range c.Series {
			v, ok := value(s, i)
			if !ok {
				continue
			}
			if c.Kind == model.ChartBars {
				sum += math.Max(v, 0)
			} else {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		hi = math.Max(hi, sum)
	}
	lo, hi, step := niceScale(lo, hi)
	f := tickFormatFor(c.Unit, math.Max(math.Abs(lo), math.Abs(hi)), step)
	yOf := func(v float64) float64 { return l.Y1 - (v-lo)/(hi-lo)*(l.Y1-l.Y0) }
	for k := 0; ; k++ {
		v := lo + float64(k)*step
		if v > hi+step/1e6 {
			break
		}
		l.YTicks = append(l.YTicks, tick{Pos: yOf(v), Label: f.format(v)})
	}
	if n == 0 {
		return l
	}

	slot := (l.X1 - l.X0) / float64(n)
	xOf := func(i int) float64 { return l.X0 + slot*(float64(i)+0.5) }
	widest := 0.0
	for _, s := range labels {
		widest = math.Max(widest, textWidth(s, chartFont))
	}
	every := int(math.Ceil((widest + 8) / slot))
	every = max(every, 1)
	for i := 0; i < n; i += every {
		l.XTicks = append(l.XTicks, tick{Pos: xOf(i), Label: labels[i]})
	}

	switch c.Kind {
	case model.ChartBars:
		bw := slot * 0.72
		for i := 0; i < n; i++ {
			base := 0.0
			for si, s := range c.Series {
				v, ok := value(s, i)
				if !ok || v <= 0 {
					continue
				}
				top := yOf(base + v)
				l.Bars = append(l.Bars, bar{
					X: xOf(i) - bw/2, Y: top, W: bw, H: yOf(base) - top,
					Color: palette[si%len(palette)],
					Tip:   labels[i] + " · " + s.Name + ": " + f.format(v),
				})
				base += v
			}
		}
	default: // line
		for si, s := range c.Series {
			var cur []point
			flush := func() {
				if len(cur) > 0 {
					l.Lines = append(l.Lines, polyline{Color: palette[si%len(palette)], Points: cur})
				}
				cur = nil
			}
			for i := 0; i < n; i++ {
				v, ok := value(s, i)
				if !ok {
					flush()
					continue
				}
				cur = append(cur, point{xOf(i), yOf(v)})
			}
			flush()
		}
	}
	return l
}

// niceScale widens [lo, hi] to multiples of a 1-2-5 step giving about
// five intervals; an empty range becomes [0, 1].
func niceScale(lo, hi float64) (float64, float64, float64) {
	if hi <= lo {
		hi = lo + 1
	}
	rough := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(rough)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if rough <= m*mag*(1+1e-9) {
			step = m * mag
			break
		}
	}
	lo = math.Floor(lo/step+1e-9) * step
	hi = math.Ceil(hi/step-1e-9) * step
	return lo, hi, step
}

// tickFormat prints axis values with one prefix and one number of
// decimals for the whole axis ("0.0 GB", "0.5 GB", "1.0 GB").
type tickFormat struct {
	div    float64
	suffix string
	dec    int
}

type prefix struct {
	div    float64
	suffix string
}

// Units of model.Chart.Unit and their prefixes (decimal, as network
// volumes and rates are counted).
var unitPrefixes = map[string][]prefix{
	"bytes": {{1, " B"}, {1e3, " KB"}, {1e6, " MB"}, {1e9, " GB"}, {1e12, " TB"}},
	"bit/s": {{1, " bit/s"}, {1e3, " kbit/s"}, {1e6, " Mbit/s"}, {1e9, " Gbit/s"}, {1e12, " Tbit/s"}},
	"%":     {{1, " %"}},
	"count": {{1, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}},
}

func tickFormatFor(unit string, maxAbs, step float64) tickFormat {
	ps, ok := unitPrefixes[unit]
	if !ok {
		ps = unitPrefixes["count"]
	}
	p := ps[0]
	for _, q := range ps {
		if maxAbs >= q.div {
			p = q
		}
	}
	dec := 0
	if r := step / p.div; r < 1 {
		dec = min(int(math.Ceil(-math.Log10(r)-1e-9)), 3)
	}
	return tickFormat{div: p.div, suffix: p.suffix, dec: dec}
}

func (f tickFormat) format(v float64) string {
	s := strconv.FormatFloat(v/f.div, 'f', f.dec, 64)
	if strings.Trim(s, "-0.") == "" { // -0 and -0.0 print as zero
		s = strings.TrimPrefix(s, "-")
	}
	return s + f.suffix
}
