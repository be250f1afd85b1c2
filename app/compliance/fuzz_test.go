package compliance

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"netmon/store/storetest"
)

// FuzzVerify feeds arbitrary bytes to the bundle reader: an auditor's
// file is untrusted input; it must be refused, never crash the verifier.
// The seeds include a genuine bundle and its forgeries (issue 28: nothing
// signed, checkpoints stripped, records appended after the last signed
// hour, a key given twice), verified with the genuine key, so mutations
// reach the signature and coverage checks. Whatever the input, "verifies"
// means every record is covered by a statement signed with that key.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"format":"netmon-compliance-evidence/1","chain_start":"` + string(bytes.Repeat([]byte("0"), 64)) + `","logs":[{"seq":1,"at":1,"ts":1,"kind":"flow","f":["a","b","1","c","2","6","1","1"],"salt":"00","h":"00"}],"checkpoints":[]}`))
	f.Add([]byte(`{"logs":[{"masked":{"1":"x"},"f":["\u0041"]}],"x":[1,{"a":"}"}],"y":true}`))
	f.Add([]byte(`{"checkpoints":[{"kind":"hourly","body":"netmon compliance checkpoint v1\n","sig":""}]}`))
	f.Add([]byte(`{"format":"netmon-compliance-evidence/1","logs":[],"checkpoints":[]}`))
	f.Add([]byte(`{"format":"netmon-compliance-evidence/1","logs":[{"seq":"1"}]}`))

	db := storetest.OpenSQLite(f)
	clk := &clock{t: day0}
	s := newTestService(f, db, clk, filepath.Join(f.TempDir(), "k"), nil)
	fill(f, s, clk, 3, 2)
	good := evidence(f, s, false)
	f.Add(good)
	var top map[string]json.RawMessage
	var logs []BundleLog
	var cps []BundleCheckpoint
	_ = json.Unmarshal(good, &top)
	_ = json.Unmarshal(top["logs"], &logs)
	_ = json.Unmarshal(top["checkpoints"], &cps)
	seed := func(l []BundleLog, c []BundleCheckpoint, extra string) {
		t2 := map[string]json.RawMessage{}
		for k, v := range top {
			t2[k] = v
		}
		t2["logs"], _ = json.Marshal(l)
		t2["checkpoints"], _ = json.Marshal(c)
		b, _ := json.Marshal(t2)
		f.Add(append(b[:len(b)-1], []byte(extra+"}")...))
	}
	seed(logs, []BundleCheckpoint{}, "")                      // checkpoints stripped
	seed(logs, cps[:len(cps)-1], "")                          // the last one stripped
	seed(append(logs, logs[len(logs)-1]), cps, "")            // a record appended
	seed(logs, cps, `,"checkpoints":[]`)                      // a key twice
	seed(logs, cps, `,"generated_at":"2001-01-01T00:00:00Z"`) // an unsigned field
	keys := VerifyOptions{Keys: []ed25519.PublicKey{s.PublicKey()}}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Verify(bytes.NewReader(data), keys)
		var open *UnsealedError
		switch {
		case err == nil && rep.Signed != rep.Records:
			t.Fatalf("verified with %d of %d records signed", rep.Signed, rep.Records)
		case err == nil && rep.Hourly+rep.Daily == 0:
			t.Fatalf("verified without a signed checkpoint: %+v", rep)
		case errors.As(err, &open) && (rep.Signed == 0 || open.SignedThrough != rep.SignedThrough || open.Last-open.First+1 != rep.Records-rep.Signed):
			t.Fatalf("tail %+v with report %+v", *open, rep)
		}
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
