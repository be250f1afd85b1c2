package procview

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
)

func TestSpikes(t *testing.T) {
	flat := func(n int, v int64) []Bucket {
		out := make([]Bucket, n)
		for i := range out {
			out[i] = Bucket{TS: int64(i) * 60, BytesIn: v}
		}
		return out
	}
	withPeak := flat(20, 100)
	withPeak[7].BytesOut = 10000
	for _, tc := range []struct {
		name    string
		buckets []Bucket
		want    []int64 // ts of the spikes
	}{
		{"none", nil, nil},
		{"one bucket", flat(1, 5), nil},
		{"flat traffic has no spike", flat(30, 100), nil},
		{"one minute far above mean + 3 sigma", withPeak, []int64{420}},
		// With few buckets a single peak cannot exceed mean + 3 sigma
		// (its z-score is at most (n-1)/sqrt(n)).
		{"a peak among five is no spike", append(flat(4, 100), Bucket{TS: 240, BytesIn: 1e9}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			for _, s := range spikes(tc.buckets) {
				got = append(got, s.TS)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("spikes (-got, +want):\n%s", diff)
			}
		})
	}
}

func TestSummarise(t *testing.T) {
	ms := []store.ProcessMinute{
		{TS: 60, PID: 9, BytesIn: 10},
		{TS: 60, PID: 3, BytesIn: 5, BytesOut: 5},
		{TS: 120, PID: 9, BytesIn: 30, BytesOut: 30},
	}
	s, buckets := summarise(ms)
	want := Summary{FirstSeen: 60, LastSeen: 120, PIDs: []int32{3, 9}, BytesIn: 45, BytesOut: 35, Total: 80, LastRate: 1}
	if diff := cmp.Diff(s, want); diff != "" {
		t.Errorf("summary (-got, +want):\n%s", diff)
	}
	if diff := cmp.Diff(buckets, []Bucket{{TS: 60, BytesIn: 15, BytesOut: 5}, {TS: 120, BytesIn: 30, BytesOut: 30}}); diff != "" {
		t.Errorf("buckets (-got, +want):\n%s", diff)
	}
	if s, b := summarise(nil); s.FirstSeen != 0 || s.PIDs == nil || len(b) != 0 {
		t.Errorf("no rows: %+v %+v", s, b)
	}
}
