package reports

import (
	"bytes"
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"netmon/app/reports/model"
	"netmon/app/reports/render"
	"netmon/store"
)

// The figure end to end: build AND render a 30-day enterprise
// report and a 90-day traffic report, HTML and PDF, over the benchmark
// database with its days rolled up (seeding and rollup untimed):
//
//	go test ./app/reports -run '^$' -bench 'E2E' -benchtime 3x
//	go test ./app/reports -run '^$' -bench 'E2EPG' -benchtime 3x   # PostgreSQL
//
// It reports the bytes of the rendered document and the peak RSS growth:
// the process's peak resident set (VmHWM) is reset before the loop
// (/proc/self/clear_refs "5") and read after it, less the RSS at the
// start; run one sub-benchmark per process (-bench 'E2E/enterprise30d-pdf$')
// for a figure not shared with the others.

func BenchmarkE2E(b *testing.B)   { benchE2E(b, benchDB(b)) }
func BenchmarkE2EPG(b *testing.B) { benchE2E(b, benchPG(b)) }

func benchE2E(b *testing.B, db *store.DB) {
	for _, c := range []struct {
		name, typ string
		days      int
		render    func(io.Writer, *model.Report) error
	}{
		{"enterprise30d-html", model.TypeEnterprise, 30, render.HTML},
		{"enterprise30d-pdf", model.TypeEnterprise, 30, render.PDF},
		{"traffic90d-html", model.TypeTraffic, 90, render.HTML},
		{"traffic90d-pdf", model.TypeTraffic, 90, render.PDF},
	} {
		b.Run(c.name, func(b *testing.B) {
			bld := NewBuilder(BuildDeps{Traffic: db, Flows: db, Deep: db, Alerts: db, Geo: seedGeo,
				SLA: &fakeSLA{f: badSLA}, Health: fakeHealth{lowHealth}})
			ctx := context.Background()
			req := Request{Type: c.typ, Days: c.days, Now: benchNow}
			var buf bytes.Buffer
			runtime.GC()
			rss0 := procStatusKB(b, "VmRSS")
			resetPeakRSS()
			b.ResetTimer()
			for b.Loop() {
				r, err := bld.Build(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				buf.Reset()
				if err := c.render(&buf, r); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(buf.Len()), "doc-bytes")
			if peak := procStatusKB(b, "VmHWM"); peak > 0 && rss0 > 0 {
				b.ReportMetric(float64(peak-rss0)/1024, "peak-rss-growth-MB")
			}
		})
	}
}

// resetPeakRSS resets the process's VmHWM to its current RSS (Linux);
// without it the peak is the process's since it started.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// procStatusKB reads a kB field of /proc/self/status (0 when absent).
func procStatusKB(b *testing.B, field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
