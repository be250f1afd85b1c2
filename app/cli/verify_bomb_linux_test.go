package cli

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// bombZip writes a zip whose evidence.json is head, then n MiB of fill,
// then tail: a few hundred KB on disk, n MiB decompressed.
func bombZip(t *testing.T, file, head string, fill []byte, n int, tail string) int64 {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	z.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	w, err := z.Create("evidence.json")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(w, head)
	chunk := bytes.Repeat(fill, (1<<20)/len(fill))
	for range n {
		_, _ = w.Write(chunk)
	}
	_, _ = io.WriteString(w, tail)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	return st.Size()
}

// maxRSSVerify is the bound on the verifier's memory on hostile input.
const maxRSSVerify = 100 << 20

// TestComplianceVerifyBombs is issue 28 item 2's memory bound: zip bombs
// of a few hundred KB that decompress to 128–256 MiB in one value are
// refused by `netmon compliance verify`, run as its own process, whose
// peak resident memory stays under 100 MiB and
// whose message quotes at most 200 bytes of the input. Before issue 28
// such a file took 1.3–2.4 GB and printed a 268 MB error line. The peak
// is the child's own (VmHWM, see childPeakEnv); getrusage is logged.
func TestComplianceVerifyBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses 640 MiB")
	}
	dir := t.TempDir()
	_, pub, _, _ := evidenceService(t, dir)
	const format = `{"format":"netmon-compliance-evidence/1",`
	cases := []struct {
		name, head, fill string
		mib              int
		tail, out        string
	}{
		{"one 256 MiB format string", `{"format":"`, "A", 256, `"}`,
			"FAILED: bundle: malformed JSON: a value longer than 1048576 bytes (not evidence)\n"},
		{"one 128 MiB record value", format + `"logs":[{"seq":1,"f":["`, "A", 128, `"]}]}`,
			"FAILED: the bundle's first record: unreadable: bundle: malformed JSON: a value longer than 1048576 bytes (not evidence)\n"},
		{"128 MiB of values in one record", format + `"logs":[{"seq":1,"f":[""`, `,""`, 128, `]}]}`,
			"FAILED: the bundle's first record: unreadable: bundle: malformed JSON: more than 16 values in a record\n"},
		{"128 MiB of nesting in an unknown key", format + `"x":`, "[", 128, ``,
			"FAILED: bundle: unexpected EOF\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, "bomb.zip")
			size := bombZip(t, file, tc.head, []byte(tc.fill), tc.mib, tc.tail)
			peakFile := filepath.Join(dir, "peak")
			_ = os.Remove(peakFile)
			t.Setenv(childPeakEnv, peakFile)
			code, out, errOut, ps := netmonChild(t, "compliance", "verify", file, "--pub", pub, "--quiet")
			rusage := ps.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
			line, err := os.ReadFile(peakFile)
			var kib int64
			if _, serr := fmt.Sscanf(strings.TrimPrefix(string(line), "VmHWM:"), "%d kB", &kib); err != nil || serr != nil {
				t.Fatalf("the child's peak memory: %q %v %v", line, err, serr)
			}
			rss := kib << 10
			t.Logf("%d-byte zip, %d MiB decompressed: exit %d, peak RSS %.1f MiB (getrusage maxrss %.1f MiB, the test binary's own RSS at the fork included)",
				size, tc.mib, code, float64(rss)/(1<<20), float64(rusage)/(1<<20))
			if code != 1 || out != tc.out {
				t.Fatalf("exit %d\nstdout %.500q\nwant   %q", code, out, tc.out)
			}
			if len(out)+len(errOut) > 1000 {
				t.Fatalf("%d bytes of output", len(out)+len(errOut))
			}
			if strings.Contains(errOut, strings.Repeat(tc.fill, 300)) {
				t.Fatalf("stderr echoes the input: %.300q", errOut)
			}
			if rss > maxRSSVerify {
				t.Fatalf("max RSS %d MiB, want under %d MiB", rss>>20, maxRSSVerify>>20)
			}
		})
	}
}
