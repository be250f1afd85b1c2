package compliance

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"

	"netmon/store"
	"netmon/store/storetest"
)

// benchBatch is the writer's batch size.
const benchBatch = 4096

func pendingFlows(n, off int) []pending {
	ps := make([]pending, n)
	for i := range ps {
		f := flow(off + i)
		ps[i] = pending{kind: KindFlow, ts: f.TS, vals: []string{f.Exporter.String(), f.Src.String(), strconv.Itoa(int(f.SrcPort)),
			f.Dst.String(), strconv.Itoa(int(f.DstPort)), "6", strconv.FormatUint(f.Packets, 10), strconv.FormatUint(f.Octets, 10)}}
	}
	return ps
}

// BenchmarkComplianceAppend is the writer's whole path on SQLite: encode,
// commit salts, chain, Merkle leaf, and the batched insert. records/s is
// the sustained rate of one writer; ns/op is per record.
func BenchmarkComplianceAppend(b *testing.B) {
	db := storetest.OpenSQLite(b)
	clk := &clock{t: day0}
	s := newBenchService(b, db, clk)
	batch := pendingFlows(benchBatch, 0)
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	n := 0
	for n < b.N {
		k := min(benchBatch, b.N-n)
		s.c.append(context.Background(), batch[:k])
		n += k
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/record")
}

// BenchmarkComplianceChainCPU is the CPU of chaining alone (no database):
// encode, commitments, chain hash, Merkle leaf.
func BenchmarkComplianceChainCPU(b *testing.B) {
	p := pendingFlows(1, 0)[0]
	var enc []byte
	var head [32]byte
	tree := rangeFactory.NewEmptyRange(0)
	b.ResetTimer()
	for i := range b.N {
		r := Record{Seq: uint64(i + 1), At: day0.Unix(), TS: p.ts, Kind: p.kind, Vals: p.vals}
		enc, _ = Encode(enc[:0], &r, nil)
		head = Next(head, enc)
		_ = tree.Append(rfc6962.DefaultHasher.HashLeaf(head[:]), nil)
		_ = packVals(nil, p.vals)
	}
}

func newBenchService(b *testing.B, db *store.DB, clk *clock) *Service {
	cfg := DefaultConfig()
	cfg.Enabled, cfg.KeyFile, cfg.Tick = true, filepath.Join(b.TempDir(), "k"), time.Hour
	s := New(storetest.Logger(b), cfg, Deps{DB: db, Now: clk.Now})
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Stop() })
	// The benchmark drives the chain itself: stop the writer goroutine.
	s.cancel()
	s.wg.Wait()
	s.cancel = nil
	return s
}

// benchBundle builds a sealed one-day bundle of n records.
func benchBundle(b *testing.B, n int) (*Service, []byte) {
	db := storetest.OpenSQLite(b)
	clk := &clock{t: day0.Truncate(24 * time.Hour)}
	s := newBenchService(b, db, clk)
	for off := 0; off < n; off += benchBatch {
		clk.Set(day0.Truncate(24 * time.Hour).Add(time.Duration(off) * 23 * time.Hour / time.Duration(n)))
		s.c.append(context.Background(), pendingFlows(min(benchBatch, n-off), off))
	}
	clk.Set(day0.Truncate(24 * time.Hour).Add(24*time.Hour + time.Minute))
	s.c.advance(context.Background(), clk.Now().Unix())
	var buf bytes.Buffer
	if err := s.Evidence(context.Background(), &buf, day0.Truncate(24*time.Hour), day0.Truncate(24*time.Hour), false); err != nil {
		b.Fatal(err)
	}
	return s, buf.Bytes()
}

// BenchmarkComplianceVerify verifies a sealed day of 200 000 records
// (NETMON_BENCH_VERIFY_RECORDS overrides it: 10000000 is the day,
// a bundle of about 2.5 GB held in memory); ns/record scales linearly
// (one pass, flat memory).
func BenchmarkComplianceVerify(b *testing.B) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("NETMON_BENCH_VERIFY_RECORDS")); err == nil && v > 0 {
		n = v
	}
	s, bundle := benchBundle(b, n)
	keys := []ed25519.PublicKey{s.PublicKey()}
	b.SetBytes(int64(len(bundle)))
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		rep, err := Verify(bytes.NewReader(bundle), VerifyOptions{Keys: keys})
		if err != nil || rep.Records != uint64(n) {
			b.Fatalf("verify: %v %+v", err, rep)
		}
	}
	cpu := float64((cpuTime() - cpu0).Nanoseconds()) / float64(b.N) / float64(n)
	b.ReportMetric(cpu, "cpu-ns/record")
	// Verify is one goroutine: its CPU time is its time on one free core.
	b.ReportMetric(cpu*10e6/1e9, "cpu-s/10M-records")
}

// BenchmarkComplianceEvidence streams a day of 200 000 records from
// SQLite to a discarding writer: MB/s, and the heap in use after the
// stream (flat: records are read by pages and written one by one).
func BenchmarkComplianceEvidence(b *testing.B) {
	const n = 200_000
	s, bundle := benchBundle(b, n)
	b.SetBytes(int64(len(bundle)))
	b.ResetTimer()
	var peak uint64
	cpu0 := cpuTime()
	for range b.N {
		w := &heapWatch{}
		if err := s.Evidence(context.Background(), w, day0.Truncate(24*time.Hour), day0.Truncate(24*time.Hour), false); err != nil {
			b.Fatal(err)
		}
		peak = max(peak, w.peak)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	cpu := (cpuTime() - cpu0).Seconds() / float64(b.N)
	b.ReportMetric(float64(len(bundle))/cpu/1e6, "MB/cpu-s")
}

// heapWatch discards what is written and samples the heap now and then.
type heapWatch struct {
	n    int
	peak uint64
}

func (h *heapWatch) Write(p []byte) (int, error) {
	h.n++
	if h.n%64 == 0 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		h.peak = max(h.peak, m.HeapInuse)
	}
	return len(p), nil
}

var _ io.Writer = (*heapWatch)(nil)
