package provider

import (
	"bytes"
	"strings"
	"testing"

	pt "netmon/app/ai/provider/providertest"
)

// BenchmarkParse measures the client side of one 1 000-delta answer
// per kind (framing, JSON, <think> stripping), without the network:
// the per-delta overhead the hub adds to a provider's own pace.
func BenchmarkParse(b *testing.B) {
	for _, kind := range Kinds {
		parts := make([]pt.Part, 1000)
		for i := range parts {
			parts[i] = pt.Part{Text: "token "}
		}
		var body strings.Builder
		for _, c := range pt.Stream(string(kind), pt.Answer{Parts: parts, TokensIn: 500, TokensOut: 1000}) {
			body.WriteString(c.Data)
		}
		raw := []byte(body.String())
		b.Run(string(kind), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if p := parseBody(kind, bytes.NewReader(raw), 0); !p.done || len(p.text) != 6000 {
					b.Fatalf("%+v", p.class)
				}
			}
		})
	}
}
