package snmp

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"netmon/store/record"
)

// The poller's own requests, replayed: snmpd's answering rate for
// exactly what the poller asks, measured with a client that costs next
// to nothing (it sends recorded datagrams and reads the answers without
// decoding them). Comparing the poller's request rate with this one, on
// the same requests, the same snmpd and the same concurrency, says
// whether the poller or snmpd is the bottleneck.

// recordedPoll is the request datagrams of a cycle of polls and the
// size of each answer.
type recordedPoll struct {
	reqs    [][]byte
	answers []int
}

// recordCycle polls dev through a recording UDP relay: one poll to
// open the session (v3 discovery) and fill the interface cache, then
// fullWalkEvery polls recorded, the production mix (moving columns,
// and a whole walk every fullWalkEvery-th poll).
func recordCycle(b *testing.B, p *Driver, dev record.Device) recordedPoll {
	relay, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer relay.Close()
	up, err := net.Dial("udp4", dev.Host)
	if err != nil {
		b.Fatal(err)
	}
	defer up.Close()
	var rec recordedPoll
	var recording atomic.Bool
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf, ans := make([]byte, 65536), make([]byte, 65536)
		for {
			n, from, err := relay.ReadFrom(buf)
			if err != nil {
				return
			}
			_ = up.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := up.Write(buf[:n]); err != nil {
				continue
			}
			m, err := up.Read(ans)
			if err != nil {
				continue
			}
			if recording.Load() {
				mu.Lock()
				rec.reqs = append(rec.reqs, append([]byte(nil), buf[:n]...))
				rec.answers = append(rec.answers, m)
				mu.Unlock()
			}
			_, _ = relay.WriteTo(ans[:m], from)
		}
	}()
	via := dev
	via.Host = relay.LocalAddr().String()
	var sess devSession
	var cache ifCache
	defer sess.close()
	for i := range fullWalkEvery + 1 {
		recording.Store(i > 0)
		if _, err := p.pollRaw(context.Background(), via, false, &cache, &sess); err != nil {
			b.Fatal(err)
		}
	}
	_ = relay.Close()
	<-done
	if len(rec.reqs) == 0 {
		b.Fatal("nothing recorded")
	}
	return rec
}

// replayRate sends the recorded cycle over and over from workers
// sockets for d, one request in flight per socket, and returns snmpd's
// answers per second. An answer much shorter than the recorded one
// (a report or an error instead of the values) fails the benchmark:
// the replay must measure the same work.
func replayRate(b *testing.B, addr string, rec recordedPoll, workers int, d time.Duration) float64 {
	var n atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	deadline := time.Now().Add(d)
	t0 := time.Now()
	for range workers {
		wg.Go(func() {
			c, err := net.Dial("udp4", addr)
			if err != nil {
				failed.Store(err)
				return
			}
			defer c.Close()
			buf := make([]byte, 65536)
			for time.Now().Before(deadline) {
				for i, req := range rec.reqs {
					_ = c.SetDeadline(time.Now().Add(2 * time.Second))
					if _, err := c.Write(req); err != nil {
						failed.Store(err)
						return
					}
					m, err := c.Read(buf)
					if err != nil {
						failed.Store(err)
						return
					}
					if m < rec.answers[i]*8/10 {
						failed.Store(errors.New("a replayed request was answered short: not the recorded work"))
						return
					}
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("replay: %v", err)
	}
	return float64(n.Load()) / time.Since(t0).Seconds()
}
