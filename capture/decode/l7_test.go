package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// l7Fixture reads a file of testdata/l7 (see its README).
func l7Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../testdata/l7", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseSNIRealClients(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"clienthello-openssl-s_client.bin", "app.example.test"},
		{"clienthello-openssl-tls12.bin", "legacy.example.test"},
		{"clienthello-curl.bin", "www.example.test"},
		{"clienthello-go-pq.bin", "pq.example.test"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ch := l7Fixture(t, tc.file)
			got, err := ParseSNI(ch, make([]byte, 0, MaxHostLen))
			if err != nil || string(got) != tc.want {
				t.Fatalf("ParseSNI = %q, %v; want %q", got, err, tc.want)
			}
			// Every strict prefix is either enough (the SNI comes
			// before the cut) or ErrIncomplete, never another error or
			// another name.
			for n := 0; n < len(ch); n++ {
				got, err := ParseSNI(ch[:n], nil)
				if err == nil && string(got) != tc.want || err != nil && !errors.Is(err, ErrIncomplete) {
					t.Fatalf("prefix %d: %q, %v", n, got, err)
				}
			}
		})
	}
}

// buildHello assembles a ClientHello record with the given extensions
// block (already encoded, without its length; nil for none).
func buildHello(exts []byte) []byte {
	body := []byte{3, 3}
	body = append(body, make([]byte, 32)...) // random
	body = append(body, 0)                   // session id
	body = append(body, 0, 2, 0x13, 0x01)    // one cipher suite
	body = append(body, 1, 0)                // null compression
	if exts != nil {                         // nil: a hello without an extensions block
		body = binary.BigEndian.AppendUint16(body, uint16(len(exts)))
		body = append(body, exts...)
	}
	hs := []byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}
	hs = append(hs, body...)
	rec := []byte{22, 3, 1, byte(len(hs) >> 8), byte(len(hs))}
	return append(rec, hs...)
}

// sniExt encodes a server_name extension with one entry of type typ.
func sniExt(typ byte, name string) []byte {
	entry := append([]byte{typ, byte(len(name) >> 8), byte(len(name))}, name...)
	list := binary.BigEndian.AppendUint16(nil, uint16(len(entry)))
	list = append(list, entry...)
	ext := []byte{0, 0}
	ext = binary.BigEndian.AppendUint16(ext, uint16(len(list)))
	return append(ext, list...)
}

func TestParseSNITable(t *testing.T) {
	other := []byte{0, 10, 0, 4, 0, 2, 0, 29} // supported_groups
	long := strings.Repeat("a", 254)
	badList := sniExt(0, "x.test")
	badList[5]++ // list length one more than the extension holds
	for _, tc := range []struct {
		desc string
		in   []byte
		want string
		err  error
	}{
		{"sni after another extension", buildHello(append(other, sniExt(0, "Mixed.Example.TEST.")...)), "mixed.example.test", nil},
		{"no extensions", buildHello(nil), "", ErrNoSNI},
		{"extensions without sni", buildHello(other), "", ErrNoSNI},
		{"entry of another type", buildHello(sniExt(1, "x.test")), "", ErrNoSNI},
		{"empty name", buildHello(sniExt(0, "")), "", ErrBadHost},
		{"name too long", buildHello(sniExt(0, long)), "", ErrBadHost},
		{"control byte", buildHello(sniExt(0, "a\x00b.test")), "", ErrBadHost},
		{"space", buildHello(sniExt(0, "a b.test")), "", ErrBadHost},
		{"non-ascii", buildHello(sniExt(0, "caf\xc3\xa9.test")), "", ErrBadHost},
		{"list length wrong", buildHello(badList), "", ErrMalformed},
		{"not a handshake record", []byte{23, 3, 3, 0, 5, 1, 2, 3, 4, 5}, "", ErrNotClientHello},
		{"server hello", []byte{22, 3, 3, 0, 4, 2, 0, 0, 0}, "", ErrNotClientHello},
		{"ssl2 style", []byte{22, 2, 0, 0, 4, 1, 0, 0, 0}, "", ErrNotClientHello},
		{"record too short", []byte{22, 3, 1, 0, 2, 1, 0}, "", ErrMalformed},
		{"empty", nil, "", ErrIncomplete},
		{"http", []byte("GET / HTTP/1.1\r\n"), "", ErrNotClientHello},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got, err := ParseSNI(tc.in, make([]byte, 0, MaxHostLen))
			if string(got) != tc.want || !errors.Is(err, tc.err) {
				t.Fatalf("ParseSNI = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestParseHTTPHost(t *testing.T) {
	for _, tc := range []struct {
		desc string
		in   string
		want string
		err  error
	}{
		{"curl", string(l7Fixture(t, "http-request-curl.bin")), "www.example.test", nil},
		{"no port, mixed case header", "POST /x HTTP/1.0\r\nhOsT:  Api.Example.Test \r\n\r\n", "api.example.test", nil},
		{"bare LF", "GET / HTTP/1.1\nUser-Agent: x\nHost: lf.test\n\n", "lf.test", nil},
		{"ipv6 literal", "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", "[::1]", nil},
		{"first host wins", "GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n", "a.test", nil},
		{"no host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", "", ErrNoHost},
		{"hostile host", "GET / HTTP/1.1\r\nHost: a\x01b\r\n\r\n", "", ErrBadHost},
		{"empty host", "GET / HTTP/1.1\r\nHost: \r\n\r\n", "", ErrBadHost},
		{"request line cut", "GET /index.ht", "", ErrIncomplete},
		{"method cut", "GE", "", ErrIncomplete},
		{"headers cut", "GET / HTTP/1.1\r\nAccept: */*\r\nHo", "", ErrIncomplete},
		{"http2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "", ErrNotHTTP},
		{"not http", "SSH-2.0-OpenSSH_9.2\r\n", "", ErrNotHTTP},
		{"wrong version", "GET / HTTP/2\r\nHost: x.test\r\n\r\n", "", ErrNotHTTP},
		{"head too long", "GET / HTTP/1.1\r\n" + strings.Repeat("X-Pad: 0123456789\r\n", 300), "", ErrNoHost},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got, err := ParseHTTPHost([]byte(tc.in), make([]byte, 0, MaxHostLen))
			if string(got) != tc.want || !errors.Is(err, tc.err) {
				t.Fatalf("ParseHTTPHost = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// TestStreamPrefixSplitHello feeds a real ClientHello in two segments
// (the way a 1507-byte hello crosses a link with a small MSS) and checks
// the SNI appears only once both are in, and that gaps, retransmissions and
// truncation behave as documented.
func TestStreamPrefixSplitHello(t *testing.T) {
	ch := l7Fixture(t, "clienthello-openssl-s_client.bin")
	// Cut inside the server_name extension.
	cut := bytes.Index(ch, []byte("app.example.test")) + 3
	const isn = 0xfffffff0 // sequence numbers wrap inside the stream
	var p StreamPrefix
	p.Add(isn, ch[:cut], false)
	if _, err := ParseSNI(p.Bytes(), nil); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("first segment: %v, want ErrIncomplete", err)
	}
	if p.Add(isn, ch[:cut], false) {
		t.Fatal("a retransmission of the first segment grew the prefix")
	}
	if !p.Add(isn+uint32(cut), ch[cut:], false) {
		t.Fatal("second segment not taken")
	}
	if got, err := ParseSNI(p.Bytes(), nil); err != nil || string(got) != "app.example.test" {
		t.Fatalf("after both segments: %q, %v", got, err)
	}

	p.Reset()
	p.Add(100, ch[:cut], false)
	p.Add(100+uint32(cut)+10, ch[cut+10:], false) // a gap of 10 bytes
	if !p.Closed() || len(p.Bytes()) != cut {
		t.Fatalf("gap: closed=%v len=%d", p.Closed(), len(p.Bytes()))
	}

	p.Reset()
	p.Add(7, ch[:cut], true) // the capture kept only the head
	if p.Add(7+uint32(cut), ch[cut:], false) || !p.Closed() {
		t.Fatal("bytes appended behind a truncated segment")
	}

	p.Reset()
	big := l7Fixture(t, "clienthello-go-pq.bin")
	p.Add(1, big[:1000], false)
	p.Add(1001, big[1000:], false)
	if len(p.Bytes()) != PrefixLen && len(p.Bytes()) != len(big) {
		t.Fatalf("len %d", len(p.Bytes()))
	}
	if got, err := ParseSNI(p.Bytes(), nil); err != nil || string(got) != "pq.example.test" {
		t.Fatalf("go client hello over two segments: %q, %v", got, err)
	}
}

func TestIsReportable(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"example.com", true},
		{"a.b.example.test", true},
		{"localhost", false},
		{"wpad", false},
		{"", false},
		{"printer.local", false},
		{"local", false},
		{"notlocal.com", true},
		{"my.local.example", true},
		{"4.3.2.1.in-addr.arpa", false},
		{"b.a.9.8.ip6.arpa", false},
		{"in-addr.arpa.example", true},
	} {
		if got := IsReportable(tc.name); got != tc.want {
			t.Errorf("IsReportable(%q) = %v, want %v", tc.name, got, tc.want)
		}
		if got := IsReportable([]byte(tc.name)); got != tc.want {
			t.Errorf("IsReportable([]byte %q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
