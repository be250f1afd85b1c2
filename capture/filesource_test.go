package capture

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

func TestOpenFile(t *testing.T) {
	tests := []struct {
		file    string
		link    layers.LinkType
		packets int
	}{
		{"mixed.pcap", layers.LinkTypeEthernet, 41},
		{"sll2.pcapng", layers.LinkTypeLinuxSLL2, 4},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			src, err := OpenFile(filepath.Join(pcapDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			if src.LinkType() != tc.link {
				t.Errorf("link type %v, want %v", src.LinkType(), tc.link)
			}
			n := 0
			for {
				data, ci, err := src.ReadPacketData()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(data) != ci.CaptureLength || ci.Timestamp.Before(fixtureBase) {
					t.Errorf("frame %d: %d bytes, %+v", n, len(data), ci)
				}
				n++
			}
			if n != tc.packets {
				t.Errorf("%d frames, want %d", n, tc.packets)
			}
			if _, _, err := src.ReadPacketData(); !errors.Is(err, io.EOF) {
				t.Errorf("read after the end: %v, want io.EOF", err)
			}
		})
	}
}

func TestOpenFileGzip(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pcapDir, "vlan.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	path := filepath.Join(t.TempDir(), "vlan.pcap.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if n, err := Replay(src, newTestEngine()); err != nil || n != 10 {
		t.Errorf("Replay = %d, %v; want 10 frames", n, err)
	}
}

func TestOpenFileErrors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pcapDir, "mixed.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := OpenFile(filepath.Join(dir, "missing.pcap")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	for name, b := range map[string][]byte{
		"empty.pcap":   nil,
		"short.pcap":   raw[:3],
		"garbage.pcap": bytes.Repeat([]byte("not a capture file "), 4),
		"header.pcap":  raw[:20],
	} {
		if src, err := OpenFile(write(name, b)); err == nil {
			src.Close()
			t.Errorf("%s opened", name)
		}
	}
	// a file cut inside a record: the frames before it, then an error
	src, err := OpenFile(write("cut.pcap", raw[:len(raw)-30]))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	n, err := Replay(src, newTestEngine())
	if err == nil || errors.Is(err, io.EOF) || n != 40 {
		t.Errorf("Replay of a cut file = %d, %v; want 40 frames and an error", n, err)
	}
}

func TestReplayUnsupportedLinkType(t *testing.T) {
	var buf bytes.Buffer
	fx := fixture{name: "x.pcap", link: layers.LinkTypeIEEE80211Radio}
	buf.Write(encodeFixture(t, fx, nil))
	src, err := newFileSource(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Replay(src, newTestEngine()); err == nil {
		t.Error("Replay accepted radiotap frames")
	}
}

func TestServiceNames(t *testing.T) {
	// the ports the brief lists must all be named
	for _, p := range []uint16{20, 21, 22, 23, 25, 53, 67, 68, 69, 80, 110, 123, 137, 138, 139, 143, 161, 162,
		389, 443, 445, 465, 514, 587, 636, 853, 873, 993, 995, 1194, 1433, 1521, 1883, 2049, 2055, 3000, 3306,
		3389, 4222, 4789, 5060, 5353, 5432, 5514, 5672, 5900, 6343, 6379, 6443, 8080, 8443, 8883, 9000, 9090,
		9200, 9418, 11211, 27017} {
		if ServiceName(p) == "" {
			t.Errorf("port %d has no name", p)
		}
	}
}
