package cli

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"netmon/app/compliance"
)

// netmonChild runs `netmon args...` as a child process (see TestMain) and
// returns its exit code, output and state (for its resource usage).
func netmonChild(t *testing.T, args ...string) (code int, stdout, stderr string, ps *os.ProcessState) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String(), cmd.ProcessState
}

// bundle is an evidence bundle as a forger edits it.
type bundle struct {
	top  map[string]json.RawMessage
	logs []compliance.BundleLog
	cps  []compliance.BundleCheckpoint
}

func parseBundle(t *testing.T, b []byte) *bundle {
	t.Helper()
	d := &bundle{}
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

// rechain recomputes every chain value from chain_start with the
// verifier's own encoding: the chain holds, only a signature can tell.
func (d *bundle) rechain(t *testing.T) {
	t.Helper()
	var start string
	_ = json.Unmarshal(d.top["chain_start"], &start)
	var prev [32]byte
	b, _ := hex.DecodeString(start)
	copy(prev[:], b)
	for i := range d.logs {
		l := d.logs[i]
		salt, _ := hex.DecodeString(l.Salt)
		r := compliance.Record{Seq: l.Seq, At: l.At, TS: l.TS, Kind: compliance.KindFlow, Vals: l.F}
		copy(r.Salt[:], salt)
		enc, err := compliance.Encode(nil, &r, nil)
		if err != nil {
			t.Fatal(err)
		}
		prev = compliance.Next(prev, enc)
		d.logs[i].H = hex.EncodeToString(prev[:])
	}
}

func (d *bundle) bytes(t *testing.T) []byte {
	t.Helper()
	d.top["logs"], _ = json.Marshal(d.logs)
	d.top["checkpoints"], _ = json.Marshal(d.cps)
	b, err := json.Marshal(d.top)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// zipOf writes a zip of the given entries, in order (names may repeat:
// archive/zip, like a forger, does not refuse it).
func zipOf(t *testing.T, file string, entries ...[2]string) {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, e := range entries {
		w, err := z.Create(e[0])
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(e[1]))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func tarGzOf(t *testing.T, file string, entries ...[2]string) {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		_ = tw.WriteHeader(&tar.Header{Name: e[0], Mode: 0o444, Size: int64(len(e[1]))})
		_, _ = tw.Write([]byte(e[1]))
	}
	_ = tw.Close()
	_ = gz.Close()
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestComplianceVerifyForgeries is issue 28 item 2 and RELIABILITY case
// 34 on the `netmon compliance verify` command, run as its own process:
// evidence nobody signed fails (exit 1), records after the last signed
// checkpoint are reported as an unsealed tail (exit 3), an archive with a
// name twice is refused (exit 1), and a genuine download exits 0. The
// verifier before issue 28 answered "OK", exit 0, to every forgery here.
func TestComplianceVerifyForgeries(t *testing.T) {
	dir := t.TempDir()
	s, pub, from, to := evidenceService(t, dir)
	var gb bytes.Buffer
	if err := s.Evidence(context.Background(), &gb, from, to, false); err != nil {
		t.Fatal(err)
	}
	genuine := gb.Bytes()

	// (a) from nothing: records written by hand, chained, no checkpoint;
	// generated_at on the records' day, so no daily seal was "due".
	nothing := parseBundle(t, genuine)
	nothing.cps = []compliance.BundleCheckpoint{}
	for i := range nothing.logs {
		nothing.logs[i].F = []string{"192.0.2.66", "10.6.6.6", "4444", "198.51.100.66", "443", "6", "1", "666"}
	}
	nothing.top["generated_at"] = json.RawMessage(`"2026-11-23T23:59:00Z"`)
	nothing.rechain(t)
	// (b) a real bundle, checkpoints stripped, a record edited.
	stripped := parseBundle(t, genuine)
	stripped.cps = []compliance.BundleCheckpoint{}
	stripped.logs[2].F[7] = "1"
	stripped.top["generated_at"] = json.RawMessage(`"2026-11-23T23:59:00Z"`)
	stripped.rechain(t)
	// (c) a real bundle with two records appended after its last signed
	// hour (00:00 of 2026-11-24), in the hour after it.
	appended := parseBundle(t, genuine)
	for i := range 2 {
		x := appended.logs[len(appended.logs)-1]
		x.Seq, x.At, x.F = x.Seq+1, x.At+3600, append([]string(nil), x.F...)
		x.F[3] = "198.51.100.9" + string(rune('0'+i))
		appended.logs = append(appended.logs, x)
	}
	appended.rechain(t)

	write := func(name string, b []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	zipOf(t, filepath.Join(dir, "genuine.zip"), [2]string{"evidence.json", string(genuine)}, [2]string{"README.txt", "x"})
	zipOf(t, filepath.Join(dir, "appended.zip"), [2]string{"evidence.json", string(appended.bytes(t))})
	zipOf(t, filepath.Join(dir, "dup.zip"), [2]string{"evidence.json", string(genuine)}, [2]string{"evidence.json", string(stripped.bytes(t))})
	zipOf(t, filepath.Join(dir, "dup2.zip"), [2]string{"evidence.json", string(genuine)}, [2]string{"copy/evidence.json", string(stripped.bytes(t))})
	tarGzOf(t, filepath.Join(dir, "dup.tar.gz"), [2]string{"evidence.json", string(genuine)}, [2]string{"README.txt", "x"}, [2]string{"evidence.json", string(stripped.bytes(t))})
	const noSig = "not covered by any checkpoint signed with a given key (a bundle forged, or its checkpoints removed)\n"
	tarGzOf(t, filepath.Join(dir, "genuine.tar.gz"), [2]string{"evidence.json", string(genuine)})
	cases := []struct {
		name, file string
		code       int
		out        string
	}{
		{"genuine zip", filepath.Join(dir, "genuine.zip"), 0,
			"note: day 2026-11-23: no timestamp (tsa_status none)\nOK: 5 records, 5 hourly checkpoints, 1 daily seals (0 timestamped) verified with 1 key(s)\n"},
		{"(a) forged from nothing", write("nothing.json", nothing.bytes(t)), 1, "FAILED: bundle of 5 records: " + noSig},
		{"(a) forged from nothing, empty", write("empty.json", []byte(`{"format":"netmon-compliance-evidence/1","logs":[],"checkpoints":[]}`)), 1,
			"FAILED: bundle of 0 records: " + noSig},
		{"(b) checkpoints stripped, a record edited", write("stripped.json", stripped.bytes(t)), 1, "FAILED: bundle of 5 records: " + noSig},
		{"(c) records appended after the last signed hour", filepath.Join(dir, "appended.zip"), 3,
			"note: day 2026-11-23: no timestamp (tsa_status none)\n" +
				"UNSEALED: records seq 6 to 7 (2) are chained but covered by no signed checkpoint: the hub's open hour, or records added after its last signature (seq 5); they prove nothing\n" +
				"signed: 5 of 7 records (seq 1 to 5), 5 hourly checkpoints, 1 daily seals (0 timestamped) verified with 1 key(s)\n"},
		{"zip with evidence.json twice", filepath.Join(dir, "dup.zip"), 1,
			"FAILED: " + filepath.Join(dir, "dup.zip") + `: the archive holds "evidence.json" twice (unzip or tar would show the last copy, not the one verified): refused` + "\n"},
		{"zip with evidence.json in two folders", filepath.Join(dir, "dup2.zip"), 1,
			"FAILED: " + filepath.Join(dir, "dup2.zip") + `: the archive holds "copy/evidence.json" twice (unzip or tar would show the last copy, not the one verified): refused` + "\n"},
		{"tar.gz with evidence.json twice", filepath.Join(dir, "dup.tar.gz"), 1,
			"FAILED: " + filepath.Join(dir, "dup.tar.gz") + `: the archive holds "evidence.json" twice (unzip or tar would show the last copy, not the one verified): refused` + "\n"},
		{"zip past --max-size", filepath.Join(dir, "genuine.zip"), 1,
			"FAILED: " + filepath.Join(dir, "genuine.zip") + ": evidence.json decompresses to more than 1000 bytes (an archive bomb, or a bundle larger than --max-size)\n"},
		{"tar.gz past --max-size", filepath.Join(dir, "genuine.tar.gz"), 1,
			"FAILED: bundle: evidence.json decompresses to more than 3000 bytes (an archive bomb, or a bundle larger than --max-size)\n"},
		{"bad first record", write("first.json", []byte(`{"format":"netmon-compliance-evidence/1","logs":[{"seq":"1"}]}`)), 1,
			"FAILED: the bundle's first record: unreadable: bundle: malformed JSON: number \"\"\n"},
	}
	args := map[string][]string{"zip past --max-size": {"--max-size", "1000"}, "tar.gz past --max-size": {"--max-size", "3000"}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut, _ := netmonChild(t, append([]string{"compliance", "verify", tc.file, "--pub", pub, "--quiet"}, args[tc.name]...)...)
			if code != tc.code || out != tc.out {
				t.Fatalf("exit %d, want %d\nstdout %q\nwant   %q\nstderr %q", code, tc.code, out, tc.out, errOut)
			}
			if strings.Contains(out+errOut, "18446744073709551615") {
				t.Fatalf("an underflowed seq in %q", out+errOut)
			}
		})
	}
}
