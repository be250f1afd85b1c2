package prompt

import (
	"fmt"
	"strings"
	"testing"
)

// megabyte is 1 MiB of syslog lines from the fixture.
func megabyte(tb testing.TB) string {
	var b strings.Builder
	recs := loadRecords(tb)
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(recs[i%len(recs)].Line)
		b.WriteByte('\n')
	}
	return b.String()[:1<<20]
}

// BenchmarkPseudonymise1MB: 1 MiB of log text with the fixture's names
// registered, on a fresh map each time (every token is new on the first
// pass). Target: ≤ 50 ms per op.
func BenchmarkPseudonymise1MB(b *testing.B) {
	text := megabyte(b)
	recs := loadRecords(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		p := New()
		p.AddDomain("corp.example")
		for _, r := range recs {
			p.AddHost(r.Host)
			p.AddUser(r.User)
		}
		p.Pseudonymise(text)
	}
}

// BenchmarkBuildFleet1000: a new conversation on the fleet scope with
// 1 000 agents: each agent's name, user and address registered, five
// facts per agent (top talkers with the baseline change, processes,
// domains, alerts, health), built within max_context_kb 24. Target:
// ≤ 200 ms per op (spec figure).
func BenchmarkBuildFleet1000(b *testing.B) {
	recs := loadRecords(b)
	var facts []Fact
	for i, r := range recs {
		facts = append(facts,
			Fact{Source: "flows:top_talkers", Text: "Top talker on agent " + r.Host, Priority: 50 - i%50,
				Data: []Field{{Name: "src", Value: r.IP4}, {Name: "dst", Value: r.IP6}, {Name: "bytes", Value: fmt.Sprint(1000 * i)}, {Name: "change", Value: "+40%"}}},
			Fact{Source: "procs:new", Text: "New process on " + r.Host, Priority: 40 - i%40,
				Data: []Field{{Name: "process", Value: "/usr/bin/curl"}, {Name: "user", Value: r.User}}},
			Fact{Source: "dns:domains", Text: "Domain queried by " + r.Host, Priority: 30 - i%30,
				Data: []Field{{Name: "qname", Value: r.FQDN}, {Name: "sni", Value: "cdn.example.net"}}},
			Fact{Source: "alerts:open", Text: "Open alert", Priority: 60 - i%60,
				Data: []Field{{Name: "message", Value: r.Line}}},
			Fact{Source: "health:agents", Text: "Agent health", Priority: 10,
				Data: []Field{{Name: "agent", Value: r.Host}, {Name: "mac", Value: r.MAC}, {Name: "cpu", Value: "93%"}}},
		)
	}
	b.ReportAllocs()
	var c Context
	for b.Loop() {
		p := New()
		p.AddDomain("corp.example")
		for _, r := range recs {
			p.AddHost(r.Host, r.FQDN)
			p.AddUser(r.User)
		}
		var err error
		if c, err = Build(SystemPrompt, facts, 24<<10, p); err != nil {
			b.Fatal(err)
		}
	}
	if len(c.Bytes) > 24<<10 {
		b.Fatalf("%d bytes over 24 KiB", len(c.Bytes))
	}
	b.ReportMetric(float64(len(c.Bytes)), "bytes")
	b.ReportMetric(float64(c.Included), "facts")
}
