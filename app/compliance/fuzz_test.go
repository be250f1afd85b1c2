package compliance

import (
	"bytes"
	"testing"
)

// FuzzVerify feeds arbitrary bytes to the bundle reader: an auditor's
// file is untrusted input; it must be refused, never crash the verifier.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"format":"netmon-compliance-evidence/1","chain_start":"` + string(bytes.Repeat([]byte("0"), 64)) + `","logs":[{"seq":1,"at":1,"ts":1,"kind":"flow","f":["a","b","1","c","2","6","1","1"],"salt":"00","h":"00"}],"checkpoints":[]}`))
	f.Add([]byte(`{"logs":[{"masked":{"1":"x"},"f":["\u0041"]}],"x":[1,{"a":"}"}],"y":true}`))
	f.Add([]byte(`{"checkpoints":[{"kind":"hourly","body":"netmon compliance checkpoint v1\n","sig":""}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = Verify(bytes.NewReader(data), VerifyOptions{})
	})
}

// FuzzParseStatement: a parsed statement re-encodes to the same bytes.
func FuzzParseStatement(f *testing.F) {
	f.Add(Statement{Kind: "hourly", Period: 3600, Day: "1970-01-01", Size: 2, First: 1, Last: 2, Time: 7200, Key: "ab"}.Body())
	f.Add(Statement{Kind: "daily", Day: "2026-11-25"}.Body())
	f.Fuzz(func(t *testing.T, body string) {
		st, err := ParseStatement(body)
		if err == nil && st.Body() != body {
			t.Fatalf("parsed %q re-encodes as %q", body, st.Body())
		}
	})
}
