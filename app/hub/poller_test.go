package hub

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"netmon/app/api"
	"netmon/app/config"
	"netmon/collectors/fwrest/fwtest"
	"netmon/collectors/snmp/snmptest"
)

// udpCounter relays datagrams between the hub and a real snmpd and
// counts the requests that went to it.
type udpCounter struct {
	addr     string
	requests atomic.Int64
}

func startUDPCounter(t *testing.T, target string) *udpCounter {
	t.Helper()
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	to, err := net.ResolveUDPAddr("udp", target)
	if err != nil {
		t.Fatal(err)
	}
	c := &udpCounter{addr: ln.LocalAddr().String()}
	var (
		mu    sync.Mutex
		peers = map[string]*net.UDPConn{} // by client address
		wg    sync.WaitGroup
	)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, p := range peers {
			_ = p.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := ln.ReadFrom(buf)
			if err != nil {
				return
			}
			c.requests.Add(1)
			mu.Lock()
			up := peers[from.String()]
			if up == nil {
				if up, err = net.DialUDP("udp", nil, to); err != nil {
					mu.Unlock()
					continue
				}
				peers[from.String()] = up
				wg.Go(func() {
					back := make([]byte, 65536)
					for {
						m, err := up.Read(back)
						if err != nil {
							if errors.Is(err, net.ErrClosed) {
								return
							}
							continue // an ICMP refusal while snmpd restarts
						}
						_, _ = ln.WriteTo(back[:m], from)
					}
				})
			}
			mu.Unlock()
			_, _ = up.Write(buf[:n])
		}
	})
	return c
}

// TestPollerFlagPollsNoDevice (spec 1: the poller runs on one replica
// only): with -poller=false the hub polls no device of either kind — a
// real snmpd behind a counting relay and the firewall fixture device
// see no request while both devices' first polls fall due — and with
// -poller on both are polled by the one scheduler. Device ids are fixed
// by the fresh database: id 1 the SNMP device (poll_seconds 10, its
// phase 6.1 s), id 2 an unmanaged node, id 3 the firewall (interval 60
// s, phase 10 ms), so every first poll is due within the wait.
func TestPollerFlagPollsNoDevice(t *testing.T) {
	agent := snmptest.Start(t, "sysName relay-sw")
	for _, on := range []bool{false, true} {
		name := "poller=false"
		if on {
			name = "poller=true"
		}
		t.Run(name, func(t *testing.T) {
			relay := startUDPCounter(t, agent.Addr)
			fw := fwtest.Start(filepath.Join("..", "..", "testdata", "fwrest", "7.6"), "fw-token")
			defer fw.Close()
			h, boot := bootstrap(t, filepath.Join(t.TempDir(), "netmon.db"), func(c *config.HubConfig) { c.Devices.Enabled = on })
			var sw, node, fwDev api.DeviceItem
			boot.call("POST", "/api/v1/devices", map[string]any{"name": "sw", "host": relay.addr, "community": "public", "poll_seconds": 10}).must(t, 200).decode(t, &sw)
			boot.call("POST", "/api/v1/devices", map[string]any{"name": "patch-panel"}).must(t, 200).decode(t, &node)
			boot.call("POST", "/api/v1/devices", map[string]any{"name": "fw", "kind": "firewall", "vendor": "fwvendor", "api_url": fw.URL,
				"api_token": "fw-token", "api_verify_tls": false, "poll_seconds": 60}).must(t, 200).decode(t, &fwDev)
			if sw.ID != 1 || node.ID != 2 || fwDev.ID != 3 {
				t.Fatalf("ids %d %d %d; the phases this test waits for are those of 1 and 3", sw.ID, node.ID, fwDev.ID)
			}
			fwRequests := func() int {
				times, _ := fw.Requests()
				return len(times)
			}
			ctx := context.Background()
			deadline := time.Now().Add(9 * time.Second)
			for time.Now().Before(deadline) && (!on || relay.requests.Load() == 0 || fwRequests() == 0) {
				time.Sleep(100 * time.Millisecond)
			}
			if !on {
				if n, f := relay.requests.Load(), fwRequests(); n != 0 || f != 0 {
					t.Fatalf("-poller=false: snmpd got %d requests, the firewall %d; want 0 and 0", n, f)
				}
				if _, ok := h.devices.DeviceState(sw.ID); ok {
					t.Error("-poller=false: the SNMP device is scheduled")
				}
				if h.devices.PollDevice(ctx, fwDev.ID) {
					t.Error("-poller=false: the firewall can be polled")
				}
				for _, id := range []int64{sw.ID, fwDev.ID} {
					if d, err := h.db.Device(ctx, id); err != nil || d.LastPoll != 0 {
						t.Errorf("-poller=false: device %d last_poll %d (%v)", id, d.LastPoll, err)
					}
				}
				return
			}
			if n, f := relay.requests.Load(), fwRequests(); n == 0 || f == 0 {
				t.Fatalf("-poller=true: snmpd got %d requests, the firewall %d; want both polled", n, f)
			}
			// Both polls saved, each under its driver; the node is not
			// scheduled.
			waitUntil(t, 10*time.Second, func() bool {
				a, _ := h.db.Device(ctx, sw.ID)
				b, _ := h.db.Device(ctx, fwDev.ID)
				return a.LastPoll > 0 && b.LastPoll > 0
			})
			for id, want := range map[int64]string{sw.ID: "snmp", fwDev.ID: "fwrest"} {
				if st, ok := h.devices.DeviceState(id); !ok || st.Driver != want {
					t.Errorf("device %d: scheduled %v by %q, want %q", id, ok, st.Driver, want)
				}
			}
			if _, ok := h.devices.DeviceState(node.ID); ok {
				t.Error("the unmanaged node is scheduled")
			}
			a, _ := h.db.Device(ctx, sw.ID)
			b, _ := h.db.Device(ctx, fwDev.ID)
			if a.SysName != "relay-sw" || a.LastError != "" || b.SysName != "fw-edge-1" || b.LastError != "" {
				t.Errorf("after the polls: %q %q, %q %q", a.SysName, a.LastError, b.SysName, b.LastError)
			}
		})
	}
}

func waitUntil(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
