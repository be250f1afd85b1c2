package store_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestIngestYieldsToPeople: while big syslog and flow batches are being
// written, audit appends (a person's writes) keep getting in, on SQLite
// within a chunk's time rather than after the whole batch; and the batches
// are stored exactly, though on SQLite they committed in several parts.
func TestIngestYieldsToPeople(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const nSyslog, nFlows = 60_000, 50_000
		es := make([]record.SyslogEvent, nSyslog)
		for i := range es {
			es[i] = record.SyslogEvent{TS: 1_700_000_000, Host: "h", Severity: 6, Message: fmt.Sprintf("m%d", i)}
		}
		fs := make([]record.Flow, nFlows)
		exp := netip.MustParseAddr("192.0.2.1")
		for i := range fs {
			src := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
			// 50 minutes of 1 000 distinct 5-tuples: each minute exactly
			// its detail budget, 50 000 rows in several transactions.
			fs[i] = record.Flow{TS: 1_700_000_000 + int64(i%50)*60, Exporter: exp, Src: src, Dst: exp, SrcPort: 1000, DstPort: 53, Proto: 17, Packets: 2, Octets: 100}
		}
		var ingesting atomic.Bool
		ingesting.Store(true)
		done := make(chan error, 1)
		go func() {
			defer ingesting.Store(false)
			n, err := db.WriteSyslog(ctx, es)
			if err == nil && n != nSyslog {
				err = fmt.Errorf("WriteSyslog committed %d of %d", n, nSyslog)
			}
			if err == nil {
				_, err = db.WriteFlows(ctx, fs)
			}
			done <- err
		}()
		var worst time.Duration
		appended, during := 0, 0
		for ingesting.Load() {
			start := time.Now()
			if _, err := db.AppendAudit(ctx, store.AuditEvent{Username: "alice", Action: "user.update", Result: "ok"}); err != nil {
				t.Fatal(err)
			}
			if ingesting.Load() {
				during++
				worst = max(worst, time.Since(start))
			}
			appended++
			time.Sleep(5 * time.Millisecond)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		t.Logf("%d audit appends while ingesting, slowest %v", during, worst)
		if db.Dialect() == store.SQLite {
			if during < 5 {
				t.Errorf("only %d audit appends got in during the ingest", during)
			}
			// Generous: the point is that audit appends are not queued
			// behind the whole ingest (which takes many seconds), not a
			// latency figure a loaded machine could miss.
			if worst > 2*time.Second {
				t.Errorf("slowest audit append during ingest %v, want within a few chunks' time", worst)
			}
		}
		var rows, packets int64
		if err := db.Reader().QueryRow(`SELECT COUNT(*) FROM syslog_events`).Scan(&rows); err != nil || rows != nSyslog {
			t.Errorf("syslog rows %d (%v), want %d", rows, err, nSyslog)
		}
		// Every minute keeps its 1 000 rows; the hours (2 000 detail rows
		// each and the rest in other rows) add up to the same.
		if _, err := db.BuildFlowHours(ctx, 1_800_000_000, 2000); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"flow_minutes", "flow_hours"} {
			if err := db.Reader().QueryRow(`SELECT COUNT(*), SUM(packets) FROM `+table).Scan(&rows, &packets); err != nil {
				t.Fatal(err)
			}
			if (table == "flow_minutes" && rows != nFlows) || packets != 2*nFlows {
				t.Errorf("%s: %d rows, %d packets; want %d and %d", table, rows, packets, nFlows, 2*nFlows)
			}
		}
		if v, err := db.VerifyAudit(ctx); err != nil || !v.OK || v.Checked != int64(appended) {
			t.Errorf("audit chain: %+v %v, want ok with %d records", v, err, appended)
		}
	})
}
