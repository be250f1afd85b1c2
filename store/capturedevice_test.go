package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/capture"
	"netmon/collectors/flows"
	"netmon/store"
	"netmon/store/storetest"
)

// The store is what the capture and the flow collector are handed as is.
var (
	_ capture.MinuteSink  = (*store.DB)(nil)
	_ capture.Memory      = (*store.DB)(nil)
	_ flows.TemplateStore = (*store.DB)(nil)
)

// TestCaptureDeviceMemory: nothing remembered reads as "", a device as
// itself, and a person's stop ("") replaces it.
func TestCaptureDeviceMemory(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var got []string
		for _, put := range []*string{nil, ptr("eth1"), ptr("")} {
			if put != nil {
				if err := db.RememberCaptureDevice(ctx, *put); err != nil {
					t.Fatal(err)
				}
			}
			d, err := db.RememberedCaptureDevice(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, d)
		}
		if diff := cmp.Diff(got, []string{"", "eth1", ""}); diff != "" {
			t.Errorf("remembered (-got, +want):\n%s", diff)
		}
	})
}

func ptr(s string) *string { return &s }
