package proc

import (
	"context"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store/record"
)

// TestInventoriesOff: a lister turned off (-host-conns=false) gives the
// alert engine one empty inventory of agent 0 and no error.
func TestInventoriesOff(t *testing.T) {
	l := NewLister()
	l.Off = true
	got, err := l.Inventories(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, []record.Inventory{{}}); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
}

// TestInventoriesEstablished: the host's inventory holds this process's
// established connection to a local listener, as agent 0's.
func TestInventoriesEstablished(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	invs, err := NewLister().Inventories(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(invs) != 1 || invs[0].AgentID != 0 || invs[0].Site != "" {
		t.Fatalf("inventories %+v, want one of agent 0", invs)
	}
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	for _, c := range invs[0].Conns {
		if c.RemoteIP == "127.0.0.1" && c.RemotePort == port {
			if c.AgentID != 0 || c.Site != "" {
				t.Errorf("connection %+v is not agent 0's", c)
			}
			return
		}
	}
	t.Errorf("the connection to %s is not in the inventory of %d connections", ln.Addr(), len(invs[0].Conns))
}
