package hub

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"netmon/agentmode/wire"
)

// fleetDeep makes BenchmarkFleet's agents send deep collection (issue
// 17): 50 processes (one remote end each), 30 L7 and 30 DNS rows a batch.
var fleetDeep = flag.Bool("fleet-deep", false, "BenchmarkFleet's agents send 50 processes, 30 l7 and 30 dns rows per batch")

// deepVariants are the distinct section sets the simulated agents send
// (agent i sends variant i % len): the fleet-wide cardinality of process
// names, hosts and domains is then in the hundreds to thousands, as in a
// real fleet, while each agent's rows stay the same from batch to batch.
const deepVariants = 64

// deepSectionsJSON returns, per variant, the JSON of the sections as a
// suffix of a batch object: `,"processes":[...],"l7":[...],"dns":[...]`.
func deepSectionsJSON() [][]byte {
	out := make([][]byte, deepVariants)
	for v := range out {
		procs := make([]wire.ProcessTraffic, 50)
		for i := range procs {
			name := fmt.Sprintf("proc-%d", (v*50+i)%400)
			procs[i] = wire.ProcessTraffic{Process: name, PID: int32(1000 + i), BytesIn: uint64(1000 * (i + 1)), BytesOut: uint64(500 * (i + 1)),
				PacketsIn: 10, PacketsOut: 5,
				Remotes: []wire.Remote{{Proto: "tcp", IP: fmt.Sprintf("198.51.100.%d", (v+i)%250+1), Port: 443, BytesIn: uint64(1000 * (i + 1)), BytesOut: uint64(500 * (i + 1))}}}
		}
		procs[49] = wire.ProcessTraffic{Process: wire.UnattributedProcess, BytesIn: 100,
			Reasons: []wire.UnattributedReason{{Reason: wire.ReasonNoSocket, Bytes: 60}, {Reason: wire.ReasonKernel, Bytes: 40}}}
		l7 := make([]wire.L7Observation, 30)
		dns := make([]wire.DNSObservation, 30)
		for i := range l7 {
			host := fmt.Sprintf("host-%d.example.com", (v*30+i)%3000)
			l7[i] = wire.L7Observation{Host: host, Kind: wire.KindTLS, Process: procs[i].Process, PID: procs[i].PID, Bytes: 5000, Hits: 2}
			dns[i] = wire.DNSObservation{Domain: host, Process: procs[i].Process, PID: procs[i].PID, Queries: 2, Responses: 2}
		}
		raw, _ := json.Marshal(wire.Telemetry{Processes: procs, L7: l7, DNS: dns})
		var sections struct {
			Processes json.RawMessage `json:"processes"`
			L7        json.RawMessage `json:"l7"`
			DNS       json.RawMessage `json:"dns"`
		}
		_ = json.Unmarshal(raw, &sections)
		out[v] = fmt.Appendf(nil, `,"processes":%s,"l7":%s,"dns":%s`, sections.Processes, sections.L7, sections.DNS)
	}
	return out
}

// pollProcesses asks GET /api/v1/processes?minutes=60 once a second as
// the admin until stop is closed, and returns the latencies in ms.
func pollProcesses(b *testing.B, base string, stop <-chan struct{}) func() []float64 {
	c := &http.Client{Timeout: 30 * time.Second}
	body, _ := json.Marshal(map[string]string{"password": "admin-password-1"})
	resp, err := c.Post(base+"/api/login", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	var login struct {
		Token string `json:"token"`
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || json.Unmarshal(raw, &login) != nil || login.Token == "" {
		b.Fatalf("login: %d %s", resp.StatusCode, raw)
	}
	var mu sync.Mutex
	var lat []float64
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			req, _ := http.NewRequest("GET", base+"/api/v1/processes?minutes=60", nil)
			req.Header.Set("Authorization", "Bearer "+login.Token)
			t := time.Now()
			resp, err := c.Do(req)
			if err != nil {
				b.Error(err)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("processes: %d", resp.StatusCode)
			}
			mu.Lock()
			lat = append(lat, float64(time.Since(t).Microseconds())/1000)
			mu.Unlock()
		}
	}()
	return func() []float64 {
		<-done
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(lat)
		return lat
	}
}
