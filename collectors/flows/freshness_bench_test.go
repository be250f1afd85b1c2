package flows

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"
)

// The freshness of the flow answers (issue 28): while BenchmarkCardinality
// replays its million distinct 5-tuples, a probe sends one NetFlow v5
// datagram of a 5-tuple of its own every second, from another exporter
// (127.0.0.2, a minute of its own, so its few rows are always kept in
// detail), and polls GET /api/v1/flows?addr= until the probe's flow is
// listed: from send to visible is the answer's freshness.

// probeV5 is a NetFlow v5 datagram of one flow from 192.0.2.(i%250+1)
// port 40000+i to 198.51.100.1:443, ending a second before now.
func probeV5(i int, now time.Time) []byte {
	b := make([]byte, 24+48)
	binary.BigEndian.PutUint16(b[0:], 5)
	binary.BigEndian.PutUint16(b[2:], 1)
	binary.BigEndian.PutUint32(b[4:], 100_000) // uptime, ms
	binary.BigEndian.PutUint32(b[8:], uint32(now.Unix()))
	binary.BigEndian.PutUint32(b[16:], uint32(i))
	r := b[24:]
	copy(r[0:], []byte{192, 0, 2, byte(i%250 + 1)})
	copy(r[4:], []byte{198, 51, 100, 1})
	binary.BigEndian.PutUint32(r[16:], 3)      // packets
	binary.BigEndian.PutUint32(r[20:], 300)    // octets
	binary.BigEndian.PutUint32(r[24:], 99_000) // first, uptime ms
	binary.BigEndian.PutUint32(r[28:], 99_000) // last
	binary.BigEndian.PutUint16(r[32:], uint16(40000+i))
	binary.BigEndian.PutUint16(r[34:], 443)
	r[38] = 6
	return b
}

// freshness probes the hub at base (flow port addr) every second until
// stop is closed, and returns each probe's time from send to visible
// (probes still invisible after 30 s are counted in missed).
func freshness(b *testing.B, base, addr string, stop <-chan struct{}) (lat []time.Duration, missed int) {
	// Not the benchmark's goroutine: errors are reported, not fatal.
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		b.Error(err)
		return nil, 0
	}
	conn, err := net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)}, to)
	if err != nil {
		b.Error(err)
		return nil, 0
	}
	defer conn.Close()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return lat, missed
		case <-time.After(time.Second):
		}
		src := fmt.Sprintf("192.0.2.%d", i%250+1)
		sent := time.Now()
		if _, err := conn.Write(probeV5(i, sent)); err != nil {
			b.Error(err)
			return lat, missed
		}
		url := fmt.Sprintf("%s/api/v1/flows?minutes=5&limit=10&addr=%s&port=%d", base, src, 40000+i)
		seen := false
		for !seen && time.Since(sent) < 30*time.Second {
			var rows []struct {
				Src     string `json:"src"`
				Packets int64  `json:"packets"`
			}
			resp, err := http.Get(url)
			if err == nil {
				err = json.NewDecoder(resp.Body).Decode(&rows)
				resp.Body.Close()
			}
			if err != nil {
				b.Errorf("%s: %v", url, err)
				return lat, missed
			}
			seen = slices.ContainsFunc(rows, func(r struct {
				Src     string `json:"src"`
				Packets int64  `json:"packets"`
			}) bool {
				return r.Src == src && r.Packets == 3
			})
			if !seen {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if seen {
			lat = append(lat, time.Since(sent))
		} else {
			missed++
		}
	}
}

// reportFreshness adds the probes' figures to b.
func reportFreshness(b *testing.B, lat []time.Duration, missed int) {
	b.ReportMetric(float64(missed), "fresh-missed")
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2].Seconds(), "fresh-p50-s")
	b.ReportMetric(lat[len(lat)-1].Seconds(), "fresh-max-s")
	b.ReportMetric(float64(len(lat)), "fresh-probes")
}
