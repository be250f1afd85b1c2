package netflow

import (
	"net/netip"
	"testing"

	"netmon/store/record"
)

// TestPoisonIsolation (RELIABILITY.md case 6): the crash-shaped
// datagrams of the hostile table, sent from the same exporter addresses
// as 100 000 valid softflowd datagrams and mixed among them, are each
// rejected with exactly one error; the valid datagrams still give every
// flow, exactly.
func TestPoisonIsolation(t *testing.T) {
	type source struct {
		from  netip.Addr
		ds    []datagram
		flows int // flows per pass over ds
	}
	var srcs []source
	for i, e := range exports {
		ds := readDatagrams(t, e.name)
		fs, _ := decodeExport(t, NewDecoder(DefaultConfig()), ds)
		srcs = append(srcs, source{netip.AddrFrom4([4]byte{10, 8, 0, byte(i + 1)}), ds, len(fs)})
	}
	var poison [][]byte
	for _, c := range hostileCases() {
		if c.err != nil {
			poison = append(poison, c.data)
		}
	}

	const valid = 100_000
	const every = 97 // a poison datagram after every 97 valid ones
	d := NewDecoder(DefaultConfig())
	var out []record.Flow
	var wantFlows, gotFlows, errs, sentPoison, sentValid int
	// Whole passes over each export in turn, so that every pass starts
	// with the datagram carrying the templates, as a live exporter's
	// periodic refresh would; poison lands anywhere, templates included.
	for sentValid < valid {
		for _, s := range srcs {
			for _, dg := range s.ds {
				if sentValid == valid {
					break
				}
				if sentValid%every == every-1 {
					_, _, err := d.Decode(poison[sentPoison%len(poison)], s.from, dg.at, out[:0])
					if err != nil {
						errs++
					}
					sentPoison++
				}
				var err error
				out, _, err = d.Decode(dg.data, s.from, dg.at, out[:0])
				if err != nil {
					errs++
				}
				gotFlows += len(out)
				sentValid++
			}
		}
	}
	// The expected count: every whole pass gives its export's flows;
	// the last, partial pass is counted datagram by datagram.
	left := valid
	for left > 0 {
		for _, s := range srcs {
			if left >= len(s.ds) {
				wantFlows += s.flows
				left -= len(s.ds)
				continue
			}
			fs, _ := decodeExport(t, NewDecoder(DefaultConfig()), s.ds[:left])
			wantFlows += len(fs)
			left = 0
			break
		}
	}
	t.Logf("%d valid datagrams, %d poison, %d flows, %d errors", sentValid, sentPoison, gotFlows, errs)
	if gotFlows != wantFlows {
		t.Errorf("%d flows, want %d", gotFlows, wantFlows)
	}
	if errs != sentPoison {
		t.Errorf("%d errors, want %d (the poison count)", errs, sentPoison)
	}
}
