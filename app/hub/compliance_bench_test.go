//go:build unix

package hub

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"netmon/app/config"
)

// Compliance alongside ingest: the 50 000 records/s.
const (
	complianceBenchRate    = 50_000
	complianceBenchSeconds = 5
)

// BenchmarkComplianceAlongsideIngest is issue 21's performance figure:
// the compliance log of 50 000 records/s sustained on SQLite alongside
// normal ingest, chain and checkpoints included. A hub on SQLite takes
// 250 000 RFC 3164 lines as real UDP datagrams at 50 000 lines/s on its
// syslog collector (receive, parse, the ingest queue into syslog_events,
// and with -compliance the tee into the chain). The compliance clock runs
// an hour per real second, so every second of the run closes an hour and
// makes a signed Merkle checkpoint. Off and on side by side:
// cpu-us/record is the process's CPU (sender included) per line sent,
// so on minus off is what the compliance log costs per record; chained/s
// is the rate at which the chain took the records (until the last one
// was committed); loss% is lines sent but not stored, dropped% the
// stored lines missing from the compliance log.
func BenchmarkComplianceAlongsideIngest(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run("compliance="+strconv.FormatBool(on), func(b *testing.B) {
			for range b.N {
				benchComplianceIngest(b, on)
			}
		})
	}
}

func benchComplianceIngest(b *testing.B, on bool) {
	port := freeUDPPortB(b)
	realStart := time.Now()
	// Six hours back, an hour per second: five hour boundaries in the
	// run, and the clock never ahead of the system's (no time_drift).
	fake := realStart.Truncate(time.Hour).Add(-6 * time.Hour)
	h := startBenchHubWith(b, port, func(c *config.HubConfig) {
		c.Compliance.Enabled = on
		c.Compliance.KeyFile = b.TempDir() + "/compliance.key"
		c.Compliance.Tick = 200 * time.Millisecond
	}, withComplianceClock(func() time.Time { return fake.Add(time.Since(realStart) * 3600) }))
	conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		b.Fatal(err)
	}
	const n = complianceBenchRate * complianceBenchSeconds
	prefix := []byte("<38>Nov 24 10:00:00 fw sshd[42]: Accepted password for alice from 198.51.100.7 port 22 ssh2 #")
	line := make([]byte, 0, len(prefix)+12)
	cpu0 := processCPU()
	start := time.Now()
	for i := range n {
		line = strconv.AppendInt(append(line[:0], prefix...), int64(i), 10)
		if _, err := conn.Write(line); err != nil {
			b.Fatal(err)
		}
		if i%500 == 499 {
			if wait := time.Until(start.Add(time.Duration(i+1) * time.Second / complianceBenchRate)); wait > 0 {
				time.Sleep(wait)
			}
		}
	}
	sent := time.Since(start)
	conn.Close()
	ctx := context.Background()
	var stored, chained int64
	chainedAt := time.Now()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_ = h.db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM syslog_events`).Scan(&stored)
		prev := chained
		if on {
			if chained, err = h.db.ComplianceCount(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if chained != prev {
			chainedAt = time.Now()
		}
		if stored >= n && (!on || chained >= stored) {
			break
		}
		// Settled short of n (UDP loss): wait a second of no progress.
		if time.Since(chainedAt) > time.Second && stored > 0 && (!on || chained >= stored) {
			break
		}
	}
	cpu := processCPU() - cpu0
	b.ReportMetric(float64(n)/sent.Seconds(), "sent/s")
	b.ReportMetric(100*float64(n-stored)/n, "loss%")
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-us/record")
	if !on {
		return
	}
	hourly, err := h.db.ListComplianceCheckpoints(ctx, "hourly", 0, time.Now().Add(time.Hour).Unix())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(chained)/chainedAt.Sub(start).Seconds(), "chained/s")
	b.ReportMetric(100*float64(stored-chained)/float64(max(stored, 1)), "dropped%")
	b.ReportMetric(float64(len(hourly)), "hourly-checkpoints")
}

// startBenchHubWith is startBenchHub with a configuration change.
func startBenchHubWith(b *testing.B, syslogPort int, mutate func(*config.HubConfig), opts ...Option) *Hub {
	cfg := config.DefaultHubConfig()
	dir := b.TempDir()
	cfg.Store.DSN, cfg.Server.Port = dir+"/netmon.db", 0
	cfg.Vault.File = dir + "/vault.key"
	cfg.Record.Dir, cfg.Geo.Dir, cfg.Geo.Online = dir, dir, false
	cfg.Syslog.Addr = udpAddr(syslogPort)
	mutate(&cfg)
	h, err := newStarted(discardLog(), cfg, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Stop(context.Background()) })
	return h
}

// processCPU is the process's user+system CPU time: on a shared machine
// the honest measure of what the run cost (wall time includes waiting
// for a core).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
