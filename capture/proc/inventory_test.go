package proc

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type fakeCache struct {
	conns []Conn
	err   error
}

func (f fakeCache) Cached(context.Context, time.Duration) ([]Conn, error) { return f.conns, f.err }

type fakeLookup map[netip.Addr]string

func (f fakeLookup) Lookup(a netip.Addr) (string, string, bool) {
	c, ok := f[a]
	return c, "AS1 Example", ok
}

// TestInventory: identical sockets are counted once, the most numerous
// first; remote ends get their country (an IPv4-mapped address too), a
// socket without a peer none; a listing error is returned.
func TestInventory(t *testing.T) {
	web := Conn{Proto: "tcp", LocalAddr: "10.0.0.1:40000", RemoteAddr: "[::ffff:81.2.69.1]:443", Status: "ESTABLISHED", PID: 7, Process: "curl"}
	dns := Conn{Proto: "udp", LocalAddr: "10.0.0.1:5353", Status: "NONE"}
	lookup := fakeLookup{netip.MustParseAddr("81.2.69.1"): "GB"}
	got, err := Inventory(context.Background(), fakeCache{conns: []Conn{dns, web, web}}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := []Connection{{Conn: web, Count: 2, Country: "GB", ASN: "AS1 Example"}, {Conn: dns, Count: 1}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
	if got, err := Inventory(context.Background(), fakeCache{conns: []Conn{web}}, nil); err != nil || got[0].Country != "" {
		t.Errorf("without lookup: %+v %v", got, err)
	}
	if _, err := Inventory(context.Background(), fakeCache{err: errors.New("no /proc")}, lookup); err == nil {
		t.Error("a listing error was swallowed")
	}
}
