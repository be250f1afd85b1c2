package compliance

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store/storetest"
)

// rechain recomputes every chain value from chain_start, as a forger who
// edits records does: the chain then holds, only a signature can tell.
func (d *doc) rechain(t *testing.T) {
	t.Helper()
	var start string
	_ = json.Unmarshal(d.top["chain_start"], &start)
	var prev [32]byte
	if b, err := hex.DecodeString(start); err == nil {
		copy(prev[:], b)
	}
	for i := range d.logs {
		r, c, err := d.logs[i].record()
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := Encode(nil, &r, c)
		prev = Next(prev, enc)
		d.logs[i].H = hexs(prev[:])
	}
}

// TestForgeries is issue 28 item 2 and RELIABILITY case 34 on the
// library: evidence verifies only as far as a signature from a given key
// covers it. The bundle: 44 records, hours 22:00 and 23:00 of
// 2026-11-23 (sealed) and 00:00, 01:00 of 2026-11-24, each checkpointed.
func TestForgeries(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	s := newTestService(t, db, clk, filepath.Join(t.TempDir(), "k"), nil)
	fill(t, s, clk, 4, 10)
	good := evidence(t, s, false)
	keys := VerifyOptions{Keys: []ed25519.PublicKey{s.PublicKey()}}
	rep, err := Verify(bytes.NewReader(good), keys)
	if err != nil || rep.Records != 44 || rep.Signed != 44 || rep.SignedThrough != 44 {
		t.Fatalf("untouched bundle: %v %+v", err, rep)
	}
	cases := []struct {
		name string
		edit func(d *doc)
		want string         // the error's text, or a part of it
		tail *UnsealedError // when the bundle verifies up to a tail
	}{
		{"forged from nothing: records, no checkpoint", func(d *doc) {
			d.cps = []BundleCheckpoint{}
			d.logs[3].F[7] = "1"
			d.rechain(t)
			d.top["generated_at"] = json.RawMessage(`"2026-11-24T00:30:00Z"`)
		}, "bundle of 44 records: not covered by any checkpoint signed with a given key", nil},
		{"forged from nothing: empty", func(d *doc) { d.cps, d.logs = []BundleCheckpoint{}, []BundleLog{} },
			"bundle of 0 records: not covered by any checkpoint signed with a given key", nil},
		{"real bundle, checkpoints stripped, records edited", func(d *doc) {
			d.cps = []BundleCheckpoint{}
			for i := range d.logs {
				if d.logs[i].Kind == "flow" {
					d.logs[i].F[6] = "0"
				}
			}
			d.rechain(t)
		}, "not covered by any checkpoint signed with a given key", nil},
		{"real bundle, forged records appended after the last signed hour", func(d *doc) {
			for i := range 3 {
				x := d.logs[len(d.logs)-1]
				x.Seq, x.At, x.F = x.Seq+1, day0.Unix()+4*3600+60, append([]string(nil), x.F...)
				x.F[1] = "10.6.6." + string(rune('1'+i))
				d.logs = append(d.logs, x)
			}
			d.rechain(t)
		}, "", &UnsealedError{SignedThrough: 44, First: 45, Last: 47}},
		{"real bundle, last checkpoint stripped, its hour edited", func(d *doc) {
			d.cps = d.cps[:len(d.cps)-1]
			d.logs[40].F[7] = "7"
			d.rechain(t)
		}, "", &UnsealedError{SignedThrough: 33, First: 34, Last: 44}},
		{"a day's checkpoints stripped, the next day's kept", func(d *doc) { d.cps = d.cps[3:] },
			"day 2026-11-23: holds records (from seq 1) but no daily seal, and a later day is signed", nil},
		{"a second, empty checkpoints array", func(d *doc) {}, `bundle: "checkpoints" given twice`, nil},
		{"a record with a key twice", func(d *doc) {}, `record after seq 1: unreadable: bundle: malformed JSON: key "f" twice in a record`, nil},
		{"a second document after the bundle", func(d *doc) {}, "data after the bundle's closing brace", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := parseDoc(t, good)
			tc.edit(&d)
			b := d.bytes(t)
			switch tc.name {
			case "a second, empty checkpoints array":
				b = append(b[:len(b)-1], []byte(`,"checkpoints":[]}`)...)
			case "a record with a key twice":
				b = bytes.Replace(b, []byte(`"seq":2,`), []byte(`"seq":2,"f":["x"],`), 1)
			case "a second document after the bundle":
				b = append(b, []byte(` {"format":"x"}`)...)
			}
			_, err := Verify(bytes.NewReader(b), keys)
			if tc.tail != nil {
				var open *UnsealedError
				if !errors.As(err, &open) {
					t.Fatalf("verify: %v, want the unsealed tail %+v", err, *tc.tail)
				}
				if diff := cmp.Diff(*open, *tc.tail); diff != "" {
					t.Fatalf("tail (-got, +want):\n%s", diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("verify: %v\nwant an error containing %q", err, tc.want)
			}
			if strings.Contains(tc.want, "not covered by any checkpoint") && !errors.Is(err, ErrNothingSigned) {
				t.Fatalf("verify: %v does not wrap ErrNothingSigned", err)
			}
		})
	}
}

// TestUnsignedFieldsDecideNothing: the fields no signature covers change
// nothing in the outcome (the old verifier required daily seals by the
// bundle's own generated_at, so editing it failed a genuine bundle, or,
// set earlier, let a forger drop them).
func TestUnsignedFieldsDecideNothing(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	s := newTestService(t, db, clk, filepath.Join(t.TempDir(), "k"), nil)
	fill(t, s, clk, 4, 10)
	good := evidence(t, s, false)
	keys := VerifyOptions{Keys: []ed25519.PublicKey{s.PublicKey()}}
	want, err := Verify(bytes.NewReader(good), keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range []map[string]string{
		{"generated_at": `"2026-12-31T00:00:00Z"`},
		{"generated_at": `"2001-01-01T00:00:00Z"`, "from": `"2001-01-01"`, "to": `"2001-01-01"`},
		{"masked": `true`, "key_id": `"0000000000000000"`},
		{"verification": `{"method":"trust me","records":1,"chain_start":"","chain_head":""}`},
		{"generated_at": `"` + strings.Repeat("x", 5000) + `"`},
	} {
		d := parseDoc(t, good)
		for k, v := range edit {
			d.top[k] = json.RawMessage(v)
		}
		for i := range d.cps {
			d.cps[i].TSAStatus = "ok"
		}
		got, err := Verify(bytes.NewReader(d.bytes(t)), keys)
		if err != nil {
			t.Fatalf("%v: %v", edit, err)
		}
		if diff := cmp.Diff(got.Records, want.Records); diff != "" || got.Signed != want.Signed || got.Daily != want.Daily {
			t.Fatalf("%v: report %+v, want %+v", edit, got, want)
		}
	}
}

// TestBadFirstRecord: a first record that cannot be read is named as the
// first, never as "after seq 18446744073709551615" (issue 28 item 9).
func TestBadFirstRecord(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"format":"netmon-compliance-evidence/1","logs":[{"seq":"1"}]}`, `the bundle's first record: unreadable: bundle: malformed JSON: number ""`},
		{`{"format":"netmon-compliance-evidence/1","logs":[{"seq":1,"at":`, `the bundle's first record: unreadable: bundle: unexpected EOF`},
		{`{"format":"netmon-compliance-evidence/1","logs":[{"seq":0,"at":1,"ts":1,"kind":"flow","f":[],"h":""}]}`, `the bundle's first record: seq 0 (seqs start at 1)`},
		{`{"format":"netmon-compliance-evidence/1","logs":[{"seq":-1}]}`, `the bundle's first record: unreadable: bundle: malformed JSON: seq -1`},
	} {
		_, err := Verify(strings.NewReader(tc.in), VerifyOptions{})
		if err == nil || err.Error() != tc.want || strings.Contains(err.Error(), "18446744073709551615") {
			t.Errorf("%s:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

// TestHostileValuesBounded: a value past its cap is refused with the
// input quoted at most maxEcho bytes, whatever its kind.
func TestHostileValuesBounded(t *testing.T) {
	big := strings.Repeat("A", maxToken+10)
	for _, tc := range []struct{ name, in, want string }{
		{"format", `{"format":"` + big + `"}`, "bundle: malformed JSON: a value longer than 1048576 bytes (not evidence)"},
		{"record value", `{"logs":[{"seq":1,"f":["` + big + `"]}]}`, "the bundle's first record: unreadable: bundle: malformed JSON: a value longer than 1048576 bytes (not evidence)"},
		{"checkpoint", `{"checkpoints":[{"body":"` + big + `"}]}`, "bundle: malformed JSON: a value longer than 1048576 bytes (not evidence)"},
		{"number", `{"logs":[{"seq":` + strings.Repeat("9", 5000) + `}]}`, "the bundle's first record: unreadable: bundle: malformed JSON: number 999999999999999999999"},
		{"values", `{"logs":[{"seq":1,"f":[` + strings.Repeat(`"",`, 100) + `""]}]}`, "the bundle's first record: unreadable: bundle: malformed JSON: more than 16 values in a record"},
		{"format echo", `{"format":"` + strings.Repeat("B", 100000) + `"}`, `bundle: format "` + strings.Repeat("B", maxEcho) + `… (100000 bytes)", want "netmon-compliance-evidence/1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(strings.NewReader(tc.in), VerifyOptions{})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %.400v\nwant %s", err, tc.want)
			}
		})
	}
	// An unknown value is skipped, never kept: a huge one costs time only.
	in := `{"x":"` + big + big + `","format":"netmon-compliance-evidence/1"}`
	if _, err := Verify(strings.NewReader(in), VerifyOptions{}); !errors.Is(err, ErrNothingSigned) {
		t.Fatalf("huge unknown value: %v", err)
	}
}
