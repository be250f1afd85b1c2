package api

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
)

// TestMergePairs: both directions of a pair add up under the direction
// that carried more octets; the pairs the limit cuts join the store's
// remainder row, which stays last, so the rows still add up to the
// window's totals.
func TestMergePairs(t *testing.T) {
	directed := []store.Conversation{
		{Src: "a", Dst: "b", Packets: 1, Octets: 100, Flows: 1, First: 10, LastSeen: 20},
		{Src: "b", Dst: "a", Packets: 2, Octets: 300, Flows: 1, First: 5, LastSeen: 15},
		{Src: "c", Dst: "d", Packets: 3, Octets: 50, Flows: 2, First: 7, LastSeen: 30},
		{Src: "e", Dst: "f", Packets: 4, Octets: 10, Flows: 3, First: 1, LastSeen: 40},
		{Truncated: true, Packets: 5, Octets: 5, Flows: 5, First: 2, LastSeen: 50},
	}
	tests := []struct {
		name  string
		limit int
		want  []store.Conversation
	}{
		{"all listed", 10, []store.Conversation{
			{Src: "b", Dst: "a", Packets: 3, Octets: 400, Flows: 2, First: 5, LastSeen: 20},
			{Src: "c", Dst: "d", Packets: 3, Octets: 50, Flows: 2, First: 7, LastSeen: 30},
			{Src: "e", Dst: "f", Packets: 4, Octets: 10, Flows: 3, First: 1, LastSeen: 40},
			{Truncated: true, Packets: 5, Octets: 5, Flows: 5, First: 2, LastSeen: 50},
		}},
		{"limit cuts two", 1, []store.Conversation{
			{Src: "b", Dst: "a", Packets: 3, Octets: 400, Flows: 2, First: 5, LastSeen: 20},
			{Truncated: true, Packets: 12, Octets: 65, Flows: 10, First: 1, LastSeen: 50},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mergePairs(append([]store.Conversation(nil), directed...), "octets", tc.limit)
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
	// Without a remainder from the store, a cut makes one.
	got := mergePairs(directed[:4], "octets", 2)
	if len(got) != 3 || !got[2].Truncated || got[2].Octets != 10 || got[2].Flows != 3 {
		t.Errorf("cut without a store remainder: %+v", got)
	}
}
