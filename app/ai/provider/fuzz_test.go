package provider

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// fuzzParser is the body of each stream parser's fuzz target: network
// input must never panic, must parse the same however it is split into
// reads, and must not yield more text than it holds.
func fuzzParser(f *testing.F, kind Kind, seeds ...string) {
	for _, name := range seeds {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(7))
	}
	f.Fuzz(func(t *testing.T, body []byte, split uint8) {
		whole := parseBody(kind, bytes.NewReader(body), 4096)
		n := int(split%64) + 1
		pieces := parseBody(kind, &chunkReader{b: body, n: n}, 4096)
		if whole != pieces {
			t.Fatalf("whole %+v, in %d-byte reads %+v", whole, n, pieces)
		}
		if bytewise := parseBody(kind, iotest.OneByteReader(bytes.NewReader(body)), 4096); bytewise != whole {
			t.Fatalf("whole %+v, byte by byte %+v", whole, bytewise)
		}
		// JSON escapes (\u00e9 → é) can only shrink text, never grow it
		// past the input, except the 3-byte U+FFFD for invalid bytes.
		if len(whole.text) > 3*len(body) {
			t.Fatalf("%d bytes of text from %d bytes of input", len(whole.text), len(body))
		}
		if whole.done && whole.class != "" {
			t.Fatalf("both done and failed: %+v", whole)
		}
		if !whole.done && whole.class == "" {
			t.Fatalf("neither done nor failed: %+v", whole)
		}
		if strings.Contains(whole.text, "\x00think") {
			t.Fatal("impossible")
		}
	})
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.b))
	copy(p, c.b[:k])
	c.b = c.b[k:]
	return k, nil
}

func FuzzParseCloudA(f *testing.F) { fuzzParser(f, CloudA, "cloud-a.sse", "compat-reasoning.sse") }
func FuzzParseCompat(f *testing.F) {
	fuzzParser(f, Compat, "compat-think.sse", "compat-reasoning.sse", "cloud-a.sse")
}
func FuzzParseCloudB(f *testing.F) { fuzzParser(f, CloudB, "cloud-b.sse", "cloud-b-error.sse") }
func FuzzParseLocalA(f *testing.F) { fuzzParser(f, LocalA, "local-a.ndjson", "local-a-error.ndjson") }
func FuzzParseLocalB(f *testing.F) { fuzzParser(f, LocalB, "local-b.sse") }
