package hub

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"netmon/app/config"
)

// BenchmarkSyslogStored sends 100 000 logger-shaped RFC 3164 lines at
// 100 000 lines/s to a hub on SQLite and counts the rows stored: the
// end-to-end figure (receive, parse, queue, store) of issue 5.
func BenchmarkSyslogStored(b *testing.B) {
	for range b.N {
		port := freeUDPPortB(b)
		h := startBenchHub(b, port)
		conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			b.Fatal(err)
		}
		const n, rate = 100_000, 100_000
		start := time.Now()
		for i := range n {
			line := fmt.Sprintf("<132>Nov 21 12:53:46 host app[42]: message %d from the benchmark", i)
			if _, err := conn.Write([]byte(line)); err != nil {
				b.Fatal(err)
			}
			if i%500 == 499 {
				if wait := time.Until(start.Add(time.Duration(i+1) * time.Second / rate)); wait > 0 {
					time.Sleep(wait)
				}
			}
		}
		sent := time.Since(start)
		conn.Close()
		var stored int64
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			_ = h.db.Reader().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM syslog_events`).Scan(&stored)
			if stored >= n {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		took := time.Since(start)
		b.ReportMetric(float64(n)/sent.Seconds(), "sent/s")
		b.ReportMetric(float64(stored), "stored")
		b.ReportMetric(100*float64(n-stored)/n, "loss%")
		b.ReportMetric(took.Seconds(), "s-until-stored")
	}
}

func freeUDPPortB(b *testing.B) int {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

func startBenchHub(b *testing.B, syslogPort int) *Hub {
	cfg := config.DefaultHubConfig()
	dir := b.TempDir()
	cfg.Store.DSN, cfg.Server.Port = dir+"/netmon.db", 0
	cfg.Vault.File = dir + "/vault.key"
	cfg.Record.Dir, cfg.Geo.Dir, cfg.Geo.Online = dir, dir, false
	cfg.Syslog.Addr = udpAddr(syslogPort)
	h, err := newStarted(discardLog(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Stop(context.Background()) })
	return h
}
