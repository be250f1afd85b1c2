package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// ngMagic is the block type of a pcapng section header block.
const ngMagic = 0x0a0d0d0a

// FileSource reads frames from a capture file for the engine tests (the
// binary captures live; a test replays fixtures through the same engine):
// classic pcap (micro- or nanosecond, either byte order, optionally
// gzip-compressed) or pcapng, told apart by the file's first four bytes.
type FileSource struct {
	f  *os.File
	r  packetReader
	lt layers.LinkType
}

type packetReader interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

// OpenFile opens the capture file at path. In a pcapng file, the link type
// is that of the first interface; its packets from interfaces of another
// link type are returned all the same (Engine.Process then counts them
// under "Other" at worst).
func OpenFile(path string) (*FileSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open capture file: %w", err)
	}
	fs, err := newFileSource(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read capture file %q: %w", path, err)
	}
	fs.f = f
	return fs, nil
}

// newFileSource reads the file header from r.
func newFileSource(r io.Reader) (*FileSource, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(4)
	if err != nil {
		return nil, fmt.Errorf("file header: %w", noEOF(err))
	}
	// The section header block type is a palindrome: byte order does not
	// matter here.
	if binary.LittleEndian.Uint32(magic) == ngMagic {
		ng, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return nil, fmt.Errorf("pcapng header: %w", err)
		}
		return &FileSource{r: ng, lt: ng.LinkType()}, nil
	}
	pr, err := pcapgo.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("pcap header: %w", err)
	}
	return &FileSource{r: pr, lt: pr.LinkType()}, nil
}

// noEOF turns a premature end of file into io.ErrUnexpectedEOF, so an
// empty or cut header is not mistaken for a clean end.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// ReadPacketData returns the next frame and its capture info; the slice is
// the caller's to keep. At the end of the file it returns io.EOF.
func (s *FileSource) ReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	return s.r.ReadPacketData()
}

// LinkType is the link type of the file's frames.
func (s *FileSource) LinkType() layers.LinkType { return s.lt }

// Close closes the file.
func (s *FileSource) Close() error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}

// PacketReader is a source of frames of one link type: a FileSource, or
// an in-memory list in tests and benchmarks.
type PacketReader interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
}

// Replay sets the engine's link type to the source's and feeds it every
// frame until io.EOF. It returns the number of frames processed; an error
// other than io.EOF (a cut or corrupt file) ends the replay and is
// returned with the count so far.
func Replay(src PacketReader, e *Engine) (int64, error) {
	if err := e.SetLinkType(src.LinkType()); err != nil {
		return 0, err
	}
	var n int64
	for {
		data, ci, err := src.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("read frame %d: %w", n+1, err)
		}
		e.Process(data, ci)
		n++
	}
}
