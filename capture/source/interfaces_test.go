package source

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInterfaceJSON pins the field names of spec section 2.2.
func TestInterfaceJSON(t *testing.T) {
	b, err := json.Marshal(Interface{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"addresses", "can_sniff", "hw_addr", "loopback", "mtu", "name",
		"rx_bytes", "rx_packets", "tx_bytes", "tx_packets", "up"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("JSON keys (-got, +want):\n%s", diff)
	}
}

// TestInterfacesListsLoopback runs everywhere, privileged or not.
func TestInterfacesListsLoopback(t *testing.T) {
	ifs, err := Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range ifs {
		if it.Loopback {
			if it.Addresses == nil {
				t.Errorf("%s: addresses is nil, want a JSON array", it.Name)
			}
			return
		}
	}
	t.Fatalf("no loopback interface in %+v", ifs)
}

func TestOptionsDefaults(t *testing.T) {
	got := Options{}.withDefaults()
	want := Options{Snaplen: DefaultSnaplen, BufferMB: DefaultBufferMB, Timeout: DefaultTimeout}
	if got != want {
		t.Fatalf("defaults = %+v, want %+v", got, want)
	}
}
