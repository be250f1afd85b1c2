//go:build !linux

package udpsock

import "net"

// BatchReader reads one datagram a call outside Linux (no recvmmsg).
type BatchReader struct {
	conn *net.UDPConn
}

// NewBatchReader returns a reader of conn; size is ignored.
func NewBatchReader(conn *net.UDPConn, size int) (*BatchReader, error) {
	return &BatchReader{conn: conn}, nil
}

// Read reads one datagram into bufs[0] and describes it in msgs[0].
func (r *BatchReader) Read(bufs [][]byte, msgs []Msg) (int, error) {
	n, ap, err := r.conn.ReadFromUDPAddrPort(bufs[0])
	if err != nil {
		return 0, err
	}
	// MSG_TRUNC is not portable: a datagram that filled its buffer may
	// have been cut.
	msgs[0] = Msg{N: n, Addr: ap.Addr().Unmap(), Truncated: n == len(bufs[0])}
	return 1, nil
}
