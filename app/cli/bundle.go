package cli

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// bundleFile is what `compliance verify` reads: the evidence.json of a
// download, with finish to call once it is read (a tar is checked to its
// end for a second copy) and close.
type bundleFile struct {
	r      io.Reader
	finish func() error
	close  func()
}

// errTooBig is the error of an archive whose evidence.json decompresses
// past the cap.
type errTooBig struct{ max int64 }

func (e errTooBig) Error() string {
	return fmt.Sprintf("evidence.json decompresses to more than %d bytes (an archive bomb, or a bundle larger than --max-size)", e.max)
}

// capped reads at most max bytes of r, then fails: decompression is
// bounded in time as the scanner bounds it in memory.
type capped struct {
	r   io.Reader
	n   int64
	max int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.n >= c.max {
		// One byte more tells a file of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			return 0, errTooBig{c.max}
		}
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), c.max-c.n)]
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// openBundle opens a bundle file: JSON as is, or the one evidence.json
// inside a .zip or .tar.gz download. An archive holding a name twice, or
// two evidence.json in different folders, is refused: unzip and tar give
// the auditor the last copy, and nothing says which one was verified.
func openBundle(name string, maxSize int64) (*bundleFile, error) {
	switch {
	case strings.HasSuffix(name, ".zip"):
		z, err := zip.OpenReader(name)
		if err != nil {
			return nil, err
		}
		var ev *zip.File
		seen := map[string]bool{}
		for _, f := range z.File {
			if err := entry(seen, f.Name); err != nil {
				z.Close()
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if path.Base(f.Name) == "evidence.json" {
				ev = f
			}
		}
		if ev == nil {
			z.Close()
			return nil, fmt.Errorf("%s: no evidence.json inside", name)
		}
		// The declared size is what archive/zip holds the entry to.
		if ev.UncompressedSize64 > uint64(maxSize) {
			z.Close()
			return nil, fmt.Errorf("%s: %w", name, errTooBig{maxSize})
		}
		r, err := ev.Open()
		if err != nil {
			z.Close()
			return nil, err
		}
		return &bundleFile{r: &capped{r: r, max: maxSize}, finish: func() error { return nil }, close: func() { r.Close(); z.Close() }}, nil
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		gz, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		// The cap is on the whole decompressed tar, read to its end.
		tr := tar.NewReader(&capped{r: gz, max: maxSize})
		seen := map[string]bool{}
		for {
			h, err := tr.Next()
			if err != nil {
				f.Close()
				if errors.Is(err, io.EOF) {
					return nil, fmt.Errorf("%s: no evidence.json inside", name)
				}
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if err := entry(seen, h.Name); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if path.Base(h.Name) == "evidence.json" {
				// The rest of the archive is read after the bundle: a
				// second copy further on is refused then.
				finish := func() error {
					for {
						h, err := tr.Next()
						if errors.Is(err, io.EOF) {
							return nil
						}
						if err != nil {
							return fmt.Errorf("%s: %w", name, err)
						}
						if err := entry(seen, h.Name); err != nil {
							return fmt.Errorf("%s: %w", name, err)
						}
					}
				}
				return &bundleFile{r: tr, finish: finish, close: func() { f.Close() }}, nil
			}
		}
	default:
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		return &bundleFile{r: f, finish: func() error { return nil }, close: func() { f.Close() }}, nil
	}
}

// maxEntries bounds the names an archive may hold (a download has four).
const maxEntries = 1000

// entry records an archive member's name, refusing a repeated name and
// a second evidence.json anywhere.
func entry(seen map[string]bool, name string) error {
	if len(seen) >= maxEntries {
		return fmt.Errorf("more than %d entries (not an evidence download)", maxEntries)
	}
	key := path.Clean(strings.TrimPrefix(name, "./"))
	if path.Base(key) == "evidence.json" {
		key = "evidence.json"
	}
	if seen[key] {
		return fmt.Errorf("the archive holds %q twice (unzip or tar would show the last copy, not the one verified): refused", clipName(name))
	}
	seen[key] = true
	return nil
}

// clipName keeps a hostile entry name out of a message's length.
func clipName(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
