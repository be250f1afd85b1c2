package compliance

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/store/storetest"
)

type doc struct {
	top  map[string]json.RawMessage
	logs []BundleLog
	cps  []BundleCheckpoint
}

func parseDoc(t *testing.T, b []byte) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal(b, &d.top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(d.top["logs"], &d.logs); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(d.top["checkpoints"], &d.cps); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d doc) bytes(t *testing.T) []byte {
	t.Helper()
	d.top["logs"], _ = json.Marshal(d.logs)
	d.top["checkpoints"], _ = json.Marshal(d.cps)
	b, err := json.Marshal(d.top)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTamper is RELIABILITY cases 14 and 15 on the compliance log: every
// change is refused and the first bad item named.
func TestTamper(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	s := newTestService(t, db, clk, filepath.Join(t.TempDir(), "k"), nil)
	fill(t, s, clk, 4, 10) // 11 records per hour, seq 1..44
	good := evidence(t, s, false)
	keys := []ed25519.PublicKey{s.PublicKey()}
	if _, err := Verify(bytes.NewReader(good), VerifyOptions{Keys: keys}); err != nil {
		t.Fatalf("untouched bundle: %v", err)
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	cases := []struct {
		name string
		edit func(d *doc)
		want string
	}{
		{"edit a record", func(d *doc) { d.logs[14].F[7] = "999999" }, "record seq 15: content does not match"},
		{"edit a masked-able field", func(d *doc) { d.logs[3].F[1] = "10.9.9.9" }, "record seq 4: content does not match"},
		{"delete a record", func(d *doc) { d.logs = append(d.logs[:20], d.logs[21:]...) }, "record seq 22: out of order or missing — seq 21 expected"},
		{"reorder two records", func(d *doc) { d.logs[5], d.logs[6] = d.logs[6], d.logs[5] }, "record seq 7: out of order or missing — seq 6 expected"},
		{"insert a record", func(d *doc) {
			x := d.logs[9]
			d.logs = append(d.logs[:10], append([]BundleLog{x}, d.logs[10:]...)...)
		}, "record seq 10: out of order or missing — seq 11 expected"},
		{"truncate the tail", func(d *doc) { d.logs = d.logs[:40] }, "hour 2026-11-24T01:00Z: covers 22 records of 2026-11-24"},
		{"swap two hours' checkpoints", func(d *doc) { d.cps[0], d.cps[1] = d.cps[1], d.cps[0] }, "hour 2026-11-23T22:00Z: does not chain to the previous checkpoint"},
		{"replace a checkpoint, re-signed", func(d *doc) {
			st, _ := ParseStatement(d.cps[1].Body)
			st.Size = 10
			d.cps[1].Body = st.Body()
			d.cps[1].Sig = base64.StdEncoding.EncodeToString(ed25519.Sign(other, []byte(d.cps[1].Body)))
		}, "hour 2026-11-23T23:00Z: signature invalid"},
		{"remove the daily seal", func(d *doc) { d.cps = append(d.cps[:2], d.cps[3:]...) }, "hour 2026-11-24T00:00Z: does not chain to the previous checkpoint"},
		{"rewrite a whole hour consistently", func(d *doc) {
			// Recompute every chain value after an edit: the chain holds,
			// the signed root does not.
			d.logs[12].F[7] = "1"
			prev := [32]byte{}
			for i := range d.logs {
				r, c, _ := d.logs[i].record()
				enc, _ := Encode(nil, &r, c)
				prev = Next(prev, enc)
				d.logs[i].H = hexs(prev[:])
			}
		}, "hour 2026-11-23T23:00Z: Merkle root or chain head differs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := parseDoc(t, good)
			tc.edit(&d)
			_, err := Verify(bytes.NewReader(d.bytes(t)), VerifyOptions{Keys: keys})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("verify: %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}

// TestKeyRotation: statements made before a key change verify with the
// old public key; without it the first old hour is named.
func TestKeyRotation(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	dir := t.TempDir()
	s := newTestService(t, db, clk, filepath.Join(dir, "old.key"), nil)
	fill(t, s, clk, 2, 5)
	oldPub := s.PublicKey()
	_ = s.Stop()
	s2 := newTestService(t, db, clk, filepath.Join(dir, "new.key"), nil)
	clk.Set(day0.Add(2*time.Hour + 5*time.Minute))
	s2.Tee(nopSink{}).PutFlows(nil)
	clk.Set(day0.Add(4 * time.Hour))
	s2.Flush(t.Context())
	b := evidence(t, s2, false)
	if _, err := Verify(bytes.NewReader(b), VerifyOptions{Keys: []ed25519.PublicKey{oldPub, s2.PublicKey()}}); err != nil {
		t.Fatalf("both keys: %v", err)
	}
	_, err := Verify(bytes.NewReader(b), VerifyOptions{Keys: []ed25519.PublicKey{s2.PublicKey()}})
	want := "hour 2026-11-23T22:00Z: signed by key " + KeyID(oldPub) + ", which is not among the given public keys"
	if err == nil || err.Error() != want {
		t.Fatalf("new key only: %v, want %q", err, want)
	}
}

func hexs(b []byte) string { return hex.EncodeToString(b) }
