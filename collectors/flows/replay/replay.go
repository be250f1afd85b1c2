// Package replay sends recorded flow-export datagrams (the UDP payloads of
// a pcap such as testdata/flows/netflow/softflowd-v9.pcap) to a collector
// at a controlled rate and counts what it sent: the load generator of the
// flow benchmarks, shared by `go test -bench` and the flowreplay command.
package replay

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Datagram is one recorded export with the number of flow records in it
// (0 for template-only datagrams).
type Datagram struct {
	Data  []byte
	Flows int
}

// Load reads the UDP payloads of a pcap.
func Load(path string) ([]Datagram, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var out []Datagram
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		udp, ok := p.TransportLayer().(*layers.UDP)
		if !ok || len(udp.Payload) < 4 {
			continue
		}
		payload := append([]byte(nil), udp.Payload...)
		out = append(out, Datagram{Data: payload, Flows: countFlows(payload)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no UDP datagrams", path)
	}
	return out, nil
}

// countFlows reads the record count of a NetFlow v5/v9 header (v9's count
// includes template records, so it is exact only for data-only datagrams:
// the caller's oracle is the collector's own count on a clean run) or
// walks IPFIX/sFlow minimally; unknown = 0.
func countFlows(d []byte) int {
	switch binary.BigEndian.Uint16(d) {
	case 5:
		return int(binary.BigEndian.Uint16(d[2:]))
	case 9:
		return int(binary.BigEndian.Uint16(d[2:]))
	}
	return 0
}

// Result counts what Send sent.
type Result struct {
	Datagrams int
	Flows     int
	Elapsed   time.Duration
}

// Send loops over ds, sending to conn at rate datagrams per second (0 =
// as fast as possible) until total datagrams were sent or ctx ends.
func Send(ctx context.Context, conn net.Conn, ds []Datagram, rate, total int) (Result, error) {
	return send(ctx, conn, ds, rate, total, false)
}

// SendRetimed is Send with each NetFlow v5/v9 datagram's export time (its
// header's Unix seconds) set to the moment it is sent: flows then land in
// the current minutes, as from a live exporter, instead of the minutes of
// the recording (their times are relative to the export time). It writes
// into ds. Other datagrams are sent as they are.
func SendRetimed(ctx context.Context, conn net.Conn, ds []Datagram, rate, total int) (Result, error) {
	return send(ctx, conn, ds, rate, total, true)
}

func send(ctx context.Context, conn net.Conn, ds []Datagram, rate, total int, retime bool) (Result, error) {
	start := time.Now()
	var res Result
	const burst = 64 // datagrams per pacing step: fine enough, cheap on the clock
	for res.Datagrams < total {
		if ctx.Err() != nil {
			break
		}
		for b := 0; b < burst && res.Datagrams < total; b++ {
			d := ds[res.Datagrams%len(ds)]
			if retime && len(d.Data) >= 12 {
				if v := binary.BigEndian.Uint16(d.Data); v == 5 || v == 9 {
					binary.BigEndian.PutUint32(d.Data[8:], uint32(time.Now().Unix()))
				}
			}
			if _, err := conn.Write(d.Data); err != nil {
				res.Elapsed = time.Since(start)
				return res, err
			}
			res.Datagrams++
			res.Flows += d.Flows
		}
		if rate > 0 {
			due := start.Add(time.Duration(float64(res.Datagrams) / float64(rate) * float64(time.Second)))
			if wait := time.Until(due); wait > 0 {
				time.Sleep(wait)
			}
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}
