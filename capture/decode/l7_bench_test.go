package decode

import "testing"

// The hot path of the pcap backend: the first payload of every outgoing
// TCP connection goes through these. They must not allocate.

func BenchmarkParseSNI(b *testing.B) {
	ch := l7Fixture(b, "clienthello-curl.bin")
	dst := make([]byte, 0, MaxHostLen)
	b.ReportAllocs()
	b.SetBytes(int64(len(ch)))
	for b.Loop() {
		if _, err := ParseSNI(ch, dst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseHTTPHost(b *testing.B) {
	req := l7Fixture(b, "http-request-curl.bin")
	dst := make([]byte, 0, MaxHostLen)
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		if _, err := ParseHTTPHost(req, dst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStreamPrefixSplit(b *testing.B) {
	ch := l7Fixture(b, "clienthello-go-pq.bin")
	var p StreamPrefix
	dst := make([]byte, 0, MaxHostLen)
	b.ReportAllocs()
	for b.Loop() {
		p.Reset()
		p.Add(1, ch[:700], false)
		p.Add(701, ch[700:], false)
		if _, err := ParseSNI(p.Bytes(), dst); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParsersDoNotAllocate(t *testing.T) {
	ch := l7Fixture(t, "clienthello-curl.bin")
	req := l7Fixture(t, "http-request-curl.bin")
	dst := make([]byte, 0, MaxHostLen)
	if n := testing.AllocsPerRun(100, func() {
		_, _ = ParseSNI(ch, dst)
		_, _ = ParseHTTPHost(req, dst)
		_ = IsReportable(dst)
	}); n != 0 {
		t.Fatalf("%v allocations per run", n)
	}
}
