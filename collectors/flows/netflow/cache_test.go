package netflow

import (
	"net/netip"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store/record"
)

// TestTemplatePersistence: templates saved from one decoder and loaded
// into a new one (a hub restart) decode data at once; without them the
// data sets are counted as missing, never guessed.
func TestTemplatePersistence(t *testing.T) {
	for _, name := range []string{"softflowd-v9.pcap", "softflowd-ipfix.pcap"} {
		t.Run(name, func(t *testing.T) {
			ds := readDatagrams(t, name)
			d := NewDecoder(DefaultConfig())
			decodeExport(t, d, ds[:1]) // the datagram with the templates
			saved := d.Templates()
			if len(saved) != 5 {
				t.Fatalf("%d templates saved, want 4 data + 1 options", len(saved))
			}
			want, _ := decodeExport(t, d, ds[1:])

			cold := NewDecoder(DefaultConfig())
			fs, res, err := cold.Decode(ds[1].data, softflowdExporter, ds[1].at, nil)
			if err != nil || len(fs) != 0 || res.MissingTemplate == 0 {
				t.Fatalf("without templates: %d flows, %+v, %v; want none, missing > 0", len(fs), res, err)
			}

			restarted := NewDecoder(DefaultConfig())
			restarted.LoadTemplates(saved)
			if restarted.TemplatesChanged() != 0 {
				t.Errorf("loading moved TemplatesChanged to %d", restarted.TemplatesChanged())
			}
			if diff := cmp.Diff(restarted.Templates(), saved, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("templates after load (-got, +want):\n%s", diff)
			}
			got, _ := decodeExport(t, restarted, ds[1:])
			if name == "softflowd-ipfix.pcap" {
				// softflowd's IPFIX times count from the exporter's
				// systemInitTimeMilliseconds, sent as options data with
				// the templates and not persisted: until it comes again
				// flows carry the export time (here 10:00:05, at most
				// seconds after the flows ended).
				for i := range got {
					if got[i].TS != int64(be32(ds[1].data[4:])) {
						t.Fatalf("flow %d: ts %d, want the export time", i, got[i].TS)
					}
					got[i].TS = want[i].TS
				}
			}
			if diff := cmp.Diff(got, want, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("after restart (-got, +want):\n%s", diff)
			}
		})
	}
}

// TestTemplatesChanged: the counter moves when a template is learned or
// changes, not when an exporter repeats it, so the caller persists only
// real changes.
func TestTemplatesChanged(t *testing.T) {
	d := NewDecoder(DefaultConfig())
	msg := v9Msg(1, set(0, tmpl(300, basicFields...)), set(300, basicRecord(1, 9000)))
	mustDecode(t, d, msg, exporterA)
	if got := d.TemplatesChanged(); got != 1 {
		t.Fatalf("after learning: %d, want 1", got)
	}
	for range 10 {
		mustDecode(t, d, msg, exporterA)
	}
	if got := d.TemplatesChanged(); got != 1 {
		t.Fatalf("after 10 identical refreshes: %d, want 1", got)
	}
	mustDecode(t, d, v9Msg(1, set(0, tmpl(300, basicFields[:5]...))), exporterA)
	if got := d.TemplatesChanged(); got != 2 {
		t.Fatalf("after a changed template: %d, want 2", got)
	}
}

// TestTemplateRefresh: a template re-sent under the same id with other
// fields replaces the old one; data then decodes with the new layout.
func TestTemplateRefresh(t *testing.T) {
	d := NewDecoder(DefaultConfig())
	fs, _ := mustDecode(t, d, v9Msg(1, set(0, tmpl(300, basicFields...)), set(300, basicRecord(7, 9000))), exporterA)
	if diff := cmp.Diff(fs, []record.Flow{basicFlow(exporterA, 7, 9000)}, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Fatalf("first layout (-got, +want):\n%s", diff)
	}
	v6 := []Field{{Type: 27, Length: 16}, {Type: 28, Length: 16}, {Type: 4, Length: 1}, {Type: 1, Length: 8}}
	rec := append(netip.MustParseAddr("2001:db8::1").AsSlice(), netip.MustParseAddr("2001:db8::2").AsSlice()...)
	rec = append(rec, 17, 0, 0, 0, 0, 0, 0, 0x10, 0)
	fs, res := mustDecode(t, d, v9Msg(1, set(0, tmpl(300, v6...)), set(300, rec)), exporterA)
	want := []record.Flow{{TS: int64(craftExport), Exporter: exporterA, Src: netip.MustParseAddr("2001:db8::1"),
		Dst: netip.MustParseAddr("2001:db8::2"), Proto: 17, Octets: 4096}}
	if diff := cmp.Diff(fs, want, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" || res.TemplatesLearned != 1 {
		t.Fatalf("new layout %+v (-got, +want):\n%s", res, diff)
	}
	if n := len(d.Templates()); n != 1 {
		t.Fatalf("%d templates cached, want 1", n)
	}
}

// TestTemplateFloodIsolation (RELIABILITY.md case 3): one spoofed
// exporter sends 10^6 distinct template ids (over many observation
// domains: an id is only 16 bits), then keeps changing one template
// fast. Its cache stays at the per-exporter bound, heap growth stays
// under a cap, and another exporter's template is neither evicted nor
// overwritten.
func TestTemplateFloodIsolation(t *testing.T) {
	const limit = 4096
	// Cap: 4096 templates of 9 fields each (~72 B of fields, a ~200 B
	// plan, map and order slots) is ~2 MB; 8 MB leaves room for GC
	// timing but fails on anything proportional to the flood.
	const heapCap = 8 << 20
	total := 1_000_000
	if testing.Short() {
		total = 100_000
	}
	d := NewDecoder(Config{MaxTemplatesPerExporter: limit, MaxExporters: 100})
	mustDecode(t, d, v9Msg(1, set(0, tmpl(300, basicFields...))), exporterB)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const perMsg = 100
	var sets [][]byte
	for i := 0; i < total; i += perMsg {
		sets = sets[:0]
		recs := make([][]byte, 0, perMsg)
		for j := range perMsg {
			recs = append(recs, tmpl(uint16(256+(i+j)%65000), basicFields...))
		}
		sets = append(sets, set(0, recs...))
		// Domain 1 is exporter B's; the flood uses its own domains and
		// also id 300 in domain 1 of its own address.
		mustDecode(t, d, v9Msg(uint32(2+(i/65000)), sets...), exporterA)
	}
	for i := range 100_000 { // fast refresh: a changed template each time
		fs := basicFields[:1+i%len(basicFields)]
		mustDecode(t, d, v9Msg(1, set(0, tmpl(300, fs...))), exporterA)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d templates sent, heap growth %d KiB", total+100_000, growth>>10)
	if growth > heapCap {
		t.Errorf("heap grew %d bytes, cap %d", growth, heapCap)
	}
	// Oldest first: A keeps the last limit-1 ids of the flood and the
	// template it kept refreshing.
	keep := map[[2]uint32]bool{{1, 300}: true}
	for i := total - (limit - 1); i < total; i++ {
		keep[[2]uint32{uint32(2 + i/65000), uint32(256 + i%65000)}] = true
	}
	perExporter := map[netip.Addr]int{}
	for _, tp := range d.Templates() {
		perExporter[tp.Exporter]++
		if tp.Exporter == exporterA && !keep[[2]uint32{tp.Domain, uint32(tp.ID)}] {
			t.Errorf("exporter A kept domain %d id %d, not among its newest", tp.Domain, tp.ID)
			break
		}
	}
	if perExporter[exporterA] != limit || perExporter[exporterB] != 1 {
		t.Errorf("templates per exporter %v, want A %d and B 1", perExporter, limit)
	}
	fs, res := mustDecode(t, d, v9Msg(1, set(300, basicRecord(3, 9000))), exporterB)
	if len(fs) != 1 || res.MissingTemplate != 0 || fs[0] != basicFlow(exporterB, 3, 9000) {
		t.Errorf("exporter B after the flood: %v %+v", fs, res)
	}
}

// TestMaxExporters: past the exporter bound new exporters' templates are
// refused and counted; known exporters keep theirs.
func TestMaxExporters(t *testing.T) {
	d := NewDecoder(Config{MaxTemplatesPerExporter: 10, MaxExporters: 2})
	msg := v9Msg(1, set(0, tmpl(300, basicFields...)), set(300, basicRecord(1, 9000)))
	for _, a := range []netip.Addr{exporterA, exporterB} {
		if fs, _ := mustDecode(t, d, msg, a); len(fs) != 1 {
			t.Fatalf("%v: %d flows", a, len(fs))
		}
	}
	fs, res := mustDecode(t, d, msg, netip.MustParseAddr("192.0.2.3"))
	if len(fs) != 0 || res.TemplatesRefused != 1 || res.MissingTemplate != 1 {
		t.Fatalf("third exporter: %d flows, %+v; want refused and missing", len(fs), res)
	}
	if fs, _ := mustDecode(t, d, msg, exporterA); len(fs) != 1 {
		t.Fatalf("exporter A lost its template")
	}
}

// TestMappedExporter: an IPv4 exporter seen through a dual-stack socket
// (::ffff:a.b.c.d) is the same exporter, reported unmapped.
func TestMappedExporter(t *testing.T) {
	d := NewDecoder(DefaultConfig())
	mapped := netip.AddrFrom16(exporterA.As16())
	mustDecode(t, d, v9Msg(1, set(0, tmpl(300, basicFields...))), mapped)
	fs, _ := mustDecode(t, d, v9Msg(1, set(300, basicRecord(1, 9000))), exporterA)
	if len(fs) != 1 || fs[0].Exporter != exporterA {
		t.Fatalf("got %v", fs)
	}
}

// TestConcurrentDecode: several goroutines decode the softflowd exports
// with one shared Decoder while another churns templates of its own
// exporter; every flow is decoded (run with -race).
func TestConcurrentDecode(t *testing.T) {
	d := NewDecoder(DefaultConfig())
	var want int
	type stream struct {
		from netip.Addr
		ds   []datagram
	}
	var streams []stream
	for i, e := range exports {
		ds := readDatagrams(t, e.name)
		from := netip.AddrFrom4([4]byte{10, 9, 0, byte(i + 1)})
		fs, _, _ := d.Decode(ds[0].data, from, ds[0].at, nil)
		for _, dg := range ds[1:] {
			f, _, err := d.Decode(dg.data, from, dg.at, nil)
			if err != nil {
				t.Fatal(err)
			}
			fs = append(fs, f...)
		}
		want += len(fs)
		streams = append(streams, stream{from, ds})
	}
	const rounds = 50
	var wg sync.WaitGroup
	counts := make([]int, len(streams))
	for i, s := range streams {
		wg.Go(func() {
			var out []record.Flow
			for range rounds {
				for _, dg := range s.ds {
					var err error
					out, _, err = d.Decode(dg.data, s.from, dg.at, out[:0])
					if err != nil {
						t.Error(err)
						return
					}
					counts[i] += len(out)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 5000 {
			_, _, _ = d.Decode(v9Msg(1, set(0, tmpl(uint16(256+i%500), basicFields[:1+i%9]...))), exporterA, craftNow, nil)
			_ = d.Templates()
		}
	})
	wg.Wait()
	got := 0
	for _, c := range counts {
		got += c
	}
	if got != want*rounds {
		t.Fatalf("%d flows, want %d", got, want*rounds)
	}
}
