package agentmode

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"netmon/agentmode/wire"
)

// TestFitConnectionCount: a host with more sockets than the hub takes in
// one batch (a busy server with tens of thousands of TIME_WAIT) sends the
// first wire.MaxConnections, live sockets first, instead of a batch the
// hub refuses with 413 every interval.
func TestFitConnectionCount(t *testing.T) {
	tests := []struct {
		desc                     string
		established, timeWait    int
		wantLen, wantEstablished int
	}{
		{"under the cap: untouched", 100, 900, 1000, 100},
		{"at the cap: untouched", 5000, wire.MaxConnections - 5000, wire.MaxConnections, 5000},
		{"over the cap: live sockets kept first", 3000, 22000, wire.MaxConnections, 3000},
		{"over the cap with live sockets alone", wire.MaxConnections + 10, 0, wire.MaxConnections, wire.MaxConnections},
	}
	a := &Agent{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			var b wire.Telemetry
			// TIME_WAIT first, as a socket table may list them.
			for i := range tt.timeWait {
				b.Connections = append(b.Connections, wire.Connection{Proto: "tcp", LocalAddr: fmt.Sprintf("10.0.0.1:%d", i%60000), RemoteAddr: "192.0.2.1:443", Status: "TIME_WAIT"})
			}
			for i := range tt.established {
				b.Connections = append(b.Connections, wire.Connection{Proto: "tcp", LocalAddr: fmt.Sprintf("10.0.0.2:%d", i%60000), RemoteAddr: "192.0.2.2:443", Status: "ESTABLISHED", PID: 42, Process: "nginx"})
			}
			a.fit(&b)
			if len(b.Connections) != tt.wantLen {
				t.Fatalf("kept %d connections, want %d", len(b.Connections), tt.wantLen)
			}
			est := 0
			for _, c := range b.Connections {
				if c.Status == "ESTABLISHED" {
					est++
				}
			}
			if est != tt.wantEstablished {
				t.Errorf("kept %d established, want %d", est, tt.wantEstablished)
			}
			raw, err := json.Marshal(b)
			if err != nil || len(raw) > wire.MaxTelemetryBytes {
				t.Errorf("batch of %d bytes (err %v) over the body limit %d", len(raw), err, wire.MaxTelemetryBytes)
			}
		})
	}
}
