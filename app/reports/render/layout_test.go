package render

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/app/reports/model"
)

func TestAxisTicks(t *testing.T) {
	tests := []struct {
		name   string
		unit   string
		lo, hi float64
		want   []string
	}{
		{"bytes in TB", "bytes", 0, 1.24e12, []string{"0.0 TB", "0.5 TB", "1.0 TB", "1.5 TB"}},
		{"bytes in GB", "bytes", 0, 71e9, []string{"0 GB", "20 GB", "40 GB", "60 GB", "80 GB"}},
		{"top tick picks the prefix", "bytes", 0, 900, []string{"0.0 KB", "0.2 KB", "0.4 KB", "0.6 KB", "0.8 KB", "1.0 KB"}},
		{"bit/s", "bit/s", 0, 1.06e9, []string{"0.0 Gbit/s", "0.5 Gbit/s", "1.0 Gbit/s", "1.5 Gbit/s"}},
		{"kbit/s", "bit/s", 0, 4200, []string{"0 kbit/s", "1 kbit/s", "2 kbit/s", "3 kbit/s", "4 kbit/s", "5 kbit/s"}},
		{"percent", "%", 0, 97.4, []string{"0 %", "20 %", "40 %", "60 %", "80 %", "100 %"}},
		{"percent below zero", "%", -3, 7, []string{"-4 %", "-2 %", "0 %", "2 %", "4 %", "6 %", "8 %"}},
		{"small counts", "count", 0, 3, []string{"0", "1", "2", "3"}},
		{"fractional counts", "count", 0, 1.3, []string{"0.0", "0.5", "1.0", "1.5"}},
		{"counts in thousands", "count", 0, 12400, []string{"0k", "5k", "10k", "15k"}},
		{"all zero", "bytes", 0, 0, []string{"0.0 B", "0.2 B", "0.4 B", "0.6 B", "0.8 B", "1.0 B"}},
		{"unknown unit counts", "flows", 0, 2e6, []string{"0.0M", "0.5M", "1.0M", "1.5M", "2.0M"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &model.Chart{Kind: model.ChartLine, Unit: tc.unit, Labels: []string{"a", "b"},
				Series: []model.Series{{Name: "s", Values: []float64{tc.lo, tc.hi}}}}
			var got []string
			for _, tk := range layoutChart(c).YTicks {
				got = append(got, tk.Label)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("ticks (-got, +want):\n%s", diff)
			}
		})
	}
}

// TestBarsStack: bars of one label stack in series order, each as tall as
// its value on the axis scale; non-finite and negative values draw nothing.
func TestBarsStack(t *testing.T) {
	c := &model.Chart{Kind: model.ChartBars, Unit: "bytes", Labels: []string{"d1", "d2"},
		Series: []model.Series{{Name: "down", Values: []float64{30, math.NaN()}}, {Name: "up", Values: []float64{10, -5}}}}
	l := layoutChart(c)
	// Scale 0..40 over the plot's height.
	perUnit := (l.Y1 - l.Y0) / 40
	if len(l.Bars) != 2 {
		t.Fatalf("got %d bars, want 2 (NaN and negative draw nothing)", len(l.Bars))
	}
	down, up := l.Bars[0], l.Bars[1]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(down.H, 30*perUnit) || !near(up.H, 10*perUnit) {
		t.Errorf("heights %.2f, %.2f; want %.2f, %.2f", down.H, up.H, 30*perUnit, 10*perUnit)
	}
	if !near(down.Y+down.H, l.Y1) || !near(up.Y+up.H, down.Y) || !near(up.Y, l.Y0) {
		t.Errorf("stack: down %.2f..%.2f, up %.2f..%.2f, plot %.2f..%.2f", down.Y, down.Y+down.H, up.Y, up.Y+up.H, l.Y0, l.Y1)
	}
	if up.Tip != "d1 · up: 10 B" {
		t.Errorf("tip = %q", up.Tip)
	}
}

// TestLineBreaksOnGaps: a line is one polyline per series, split where a
// value is missing.
func TestLineBreaksOnGaps(t *testing.T) {
	c := &model.Chart{Kind: model.ChartLine, Unit: "%", Labels: []string{"a", "b", "c", "d", "e"},
		Series: []model.Series{
			{Name: "s1", Values: []float64{1, 2, 3, 4, 5}},
			{Name: "s2", Values: []float64{1, math.Inf(1), 3, 4}}, // short and with a gap
		}}
	l := layoutChart(c)
	var got []int
	for _, pl := range l.Lines {
		got = append(got, len(pl.Points))
	}
	if diff := cmp.Diff(got, []int{5, 1, 2}); diff != "" {
		t.Errorf("points per polyline (-got, +want):\n%s", diff)
	}
}

// TestXLabelsThinned: 90 daily labels do not overlap: every kept label has
// its own width of room.
func TestXLabelsThinned(t *testing.T) {
	c := &model.Chart{Kind: model.ChartBars, Unit: "bytes", Labels: make([]string, 90)}
	for i := range c.Labels {
		c.Labels[i] = "2026-11-01"
	}
	l := layoutChart(c)
	if len(l.XTicks) < 5 || len(l.XTicks) >= 90 {
		t.Fatalf("%d x labels for 90 days", len(l.XTicks))
	}
	w := textWidth("2026-11-01", chartFont)
	for i := 1; i < len(l.XTicks); i++ {
		if gap := l.XTicks[i].Pos - l.XTicks[i-1].Pos; gap < w {
			t.Errorf("labels %d and %d are %.1f apart, narrower than a label (%.1f)", i-1, i, gap, w)
		}
	}
}
