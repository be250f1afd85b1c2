package decode

import (
	"errors"
	"testing"
)

// l7Seeds are the real client bytes of testdata/l7.
var l7Seeds = []string{
	"clienthello-openssl-s_client.bin", "clienthello-openssl-tls12.bin",
	"clienthello-curl.bin", "clienthello-go-pq.bin", "http-request-curl.bin",
}

// checkHost holds the promises both parsers make about a returned name.
func checkHost(t *testing.T, h []byte, err error) {
	if err != nil {
		if h != nil {
			t.Fatalf("name %q returned with error %v", h, err)
		}
		return
	}
	if len(h) == 0 || len(h) > MaxHostLen {
		t.Fatalf("name of %d bytes", len(h))
	}
	for _, c := range h {
		if c < 0x21 || c > 0x7e || 'A' <= c && c <= 'Z' {
			t.Fatalf("byte %#x in name %q", c, h)
		}
	}
}

func FuzzParseSNI(f *testing.F) {
	for _, s := range l7Seeds {
		f.Add(l7Fixture(f, s), 100)
	}
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		dst := make([]byte, 0, MaxHostLen)
		h, err := ParseSNI(in, dst)
		checkHost(t, h, err)
		// A prefix never contradicts the whole: it gives the same name
		// or asks for more bytes.
		if cut < 0 {
			cut = -cut
		}
		if len(in) > 0 {
			cut %= len(in)
			hp, errp := ParseSNI(in[:cut], nil)
			if errp == nil && (err != nil || string(hp) != string(h)) {
				t.Fatalf("prefix %d gave %q, whole gave %q, %v", cut, hp, h, err)
			}
			if errp != nil && !errors.Is(errp, ErrIncomplete) && !errors.Is(errp, err) {
				t.Fatalf("prefix %d: %v, whole: %v", cut, errp, err)
			}
		}
	})
}

func FuzzParseHTTPHost(f *testing.F) {
	for _, s := range l7Seeds {
		f.Add(l7Fixture(f, s))
	}
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a.test:80\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := ParseHTTPHost(in, make([]byte, 0, MaxHostLen))
		checkHost(t, h, err)
	})
}

// FuzzStreamPrefix splits an input into two segments with arbitrary
// sequence numbers: the reassembled bytes are always a prefix of some
// order of the input, and parsing them never panics.
func FuzzStreamPrefix(f *testing.F) {
	for _, s := range l7Seeds {
		f.Add(l7Fixture(f, s), uint32(1), 200, uint32(201), false)
	}
	f.Fuzz(func(t *testing.T, in []byte, seq1 uint32, cut int, seq2 uint32, trunc bool) {
		if cut < 0 {
			cut = -cut
		}
		if len(in) > 0 {
			cut %= len(in)
		} else {
			cut = 0
		}
		var p StreamPrefix
		p.Add(seq1, in[:cut], trunc)
		p.Add(seq2, in[cut:], false)
		if len(p.Bytes()) > PrefixLen {
			t.Fatal("prefix over its bound")
		}
		h, err := ParseSNI(p.Bytes(), nil)
		checkHost(t, h, err)
		h, err = ParseHTTPHost(p.Bytes(), nil)
		checkHost(t, h, err)
	})
}
