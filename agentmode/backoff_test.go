package agentmode

import (
	"testing"
	"time"
)

func TestBackoffSchedule(t *testing.T) {
	tests := []struct {
		desc  string
		base  time.Duration
		fails []int
		r     float64
		want  []time.Duration
	}{
		{"30 s interval, no jitter: ×1 ×2 ×4 ×8 ×8", 30 * time.Second, []int{0, 1, 2, 3, 4, 10}, 0.5,
			[]time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute, 4 * time.Minute}},
		{"60 s interval hits the 5 minute cap", time.Minute, []int{0, 1, 2, 3, 4}, 0.5,
			[]time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute}},
		{"lowest jitter is -20%", 10 * time.Second, []int{0, 3}, 0,
			[]time.Duration{8 * time.Second, 64 * time.Second}},
		{"jitter never passes the cap", 40 * time.Second, []int{3}, 0.999, []time.Duration{5 * time.Minute}},
		{"negative fails counts as the first", 30 * time.Second, []int{-1}, 0.5, []time.Duration{30 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for i, f := range tt.fails {
				if got := Backoff(tt.base, f, tt.r); got != tt.want[i] {
					t.Errorf("Backoff(%v, %d, %v) = %v, want %v", tt.base, f, tt.r, got, tt.want[i])
				}
			}
		})
	}
}

func TestBackoffJitterBounds(t *testing.T) {
	base := 30 * time.Second
	for fails := 0; fails < 6; fails++ {
		exp := fails
		if exp > 3 {
			exp = 3
		}
		nominal := base * time.Duration(1<<exp)
		for _, r := range []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9999} {
			got := Backoff(base, fails, r)
			lo, hi := time.Duration(float64(nominal)*0.8), time.Duration(float64(nominal)*1.2)
			if hi > MaxBackoff {
				hi = MaxBackoff
			}
			if got < lo || got > hi {
				t.Errorf("fails %d r %v: %v outside [%v, %v]", fails, r, got, lo, hi)
			}
		}
	}
}
