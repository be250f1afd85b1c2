package netflow

import (
	"errors"
	"slices"
	"testing"
	"time"

	"netmon/store/record"
)

// FuzzDecode (RELIABILITY.md case 1) is seeded with every softflowd
// datagram of testdata/flows/netflow and every hostile case. For any
// input: no panic, under 100 ms, flows or exactly one of the three
// errors with nothing appended, no more flows than bytes, and the
// templates learned survive a persistence round trip unchanged.
//
// Run it with a bounded minimisation:
//
//	go test ./collectors/flows/netflow -run '^$' -fuzz FuzzDecode -fuzztime 30s -fuzzminimizetime 100x
//
// Go minimises every input that finds new coverage, and its last pass
// tries every byte range (quadratic): for a 1.4 KB datagram that is
// about a million executions, so with the default (60 s per input) a
// 30 s run spends its whole time minimising and fuzzes nothing.
func FuzzDecode(f *testing.F) {
	var saved []Template
	for _, e := range exports {
		ds := readDatagrams(f, e.name)
		for _, dg := range ds {
			f.Add(dg.data)
		}
		d := NewDecoder(DefaultConfig())
		decodeExport(f, d, ds[:1])
		saved = append(saved, d.Templates()...)
	}
	for _, c := range hostileCases() {
		// The 65 KB case is left out: mutating it costs 65 000 flows
		// per execution, which only slows the search down.
		if len(c.data) <= 8<<10 {
			f.Add(c.data)
		}
	}
	prefix := make([]record.Flow, 2)
	f.Fuzz(func(t *testing.T, data []byte) {
		// A decoder that knows softflowd's templates, so fuzzed data
		// sets reach the record decoding, as after a restart.
		d := NewDecoder(DefaultConfig())
		d.LoadTemplates(saved)
		start := time.Now()
		got, res, err := d.Decode(data, softflowdExporter, craftNow, prefix)
		// One datagram (at most 64 KiB) decodes in milliseconds; a
		// second is loose enough for a loaded machine and still catches
		// work that grows faster than the datagram.
		if el := time.Since(start); el > time.Second {
			t.Errorf("%d bytes took %v", len(data), el)
		}
		if err != nil {
			if !errors.Is(err, ErrShort) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if len(got) != len(prefix) || res.Flows != 0 {
				t.Fatalf("error %v with %d flows appended", err, len(got)-len(prefix))
			}
		} else {
			n := len(got) - len(prefix)
			if n != res.Flows || n > len(data) {
				t.Fatalf("%d flows appended, Result.Flows %d, %d bytes", n, res.Flows, len(data))
			}
		}
		ts := d.Templates()
		again := NewDecoder(DefaultConfig())
		again.LoadTemplates(ts)
		if !slices.EqualFunc(again.Templates(), ts, func(a, b Template) bool {
			return a.Exporter == b.Exporter && a.Domain == b.Domain && a.ID == b.ID && a.Version == b.Version &&
				a.Options == b.Options && slices.Equal(a.Fields, b.Fields)
		}) {
			t.Fatalf("templates changed through persistence: %v", ts)
		}
	})
}
