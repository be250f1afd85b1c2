// Package proc lists the host's sockets with the process that owns them:
// the connection inventory of GET /api/connections (spec 2.11) and, later,
// of agent telemetry. It uses gopsutil, which reads /proc on Linux and the
// platform APIs elsewhere; PID and process name need the same user or
// root on Linux (spec 2.11).
//
// It is a leaf producer package: it imports only store/record, the
// vocabulary its inventory reaches the alert engine in.
package proc

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	gnet "github.com/shirou/gopsutil/v4/net"
	"github.com/shirou/gopsutil/v4/process"
)

// Conn is one socket.
type Conn struct {
	Proto      string `json:"proto"` // tcp, tcp6, udp, udp6
	LocalAddr  string `json:"local_addr"`
	RemoteAddr string `json:"remote_addr"` // "" for a socket without a peer
	Status     string `json:"status"`
	PID        int32  `json:"pid"`
	Process    string `json:"process"`
}

// Lister lists sockets, caching process names (a name is read once per
// PID and kept for NameTTL, so a refresh every few seconds does not reread
// every /proc/<pid>/comm).
type Lister struct {
	NameTTL time.Duration
	// Max bounds the sockets read (0: no bound).
	Max int
	// Off makes List return no sockets without reading any: the hub's
	// own inventory turned off (-host-conns=false), for hubs that must
	// observe only what their agents send (tests, shared machines).
	Off bool

	mu     sync.Mutex
	names  map[int32]cachedName
	last   []Conn
	lastAt time.Time
}

type cachedName struct {
	name string
	at   time.Time
}

// NewLister returns a lister with a 30 s name cache and at most 20 000
// sockets.
func NewLister() *Lister {
	return &Lister{NameTTL: 30 * time.Second, Max: 20000, names: map[int32]cachedName{}}
}

// List returns the host's TCP and UDP sockets (IPv4 and IPv6).
func (l *Lister) List(ctx context.Context) ([]Conn, error) {
	if l.Off {
		return []Conn{}, nil
	}
	stats, err := gnet.ConnectionsMaxWithoutUidsWithContext(ctx, "inet", l.Max)
	if err != nil {
		return nil, fmt.Errorf("list sockets: %w", err)
	}
	out := make([]Conn, 0, len(stats))
	now := time.Now()
	for _, s := range stats {
		c := Conn{
			Proto:     protoName(s.Family, s.Type),
			LocalAddr: hostPort(s.Laddr),
			Status:    s.Status,
			PID:       s.Pid,
		}
		if s.Raddr.IP != "" && s.Raddr.Port != 0 {
			c.RemoteAddr = hostPort(s.Raddr)
		}
		if s.Pid > 0 {
			c.Process = l.name(ctx, s.Pid, now)
		}
		out = append(out, c)
	}
	l.prune(now)
	return out, nil
}

func (l *Lister) name(ctx context.Context, pid int32, now time.Time) string {
	l.mu.Lock()
	if n, ok := l.names[pid]; ok && now.Sub(n.at) < l.NameTTL {
		l.mu.Unlock()
		return n.name
	}
	l.mu.Unlock()
	name := ""
	if p, err := process.NewProcessWithContext(ctx, pid); err == nil {
		name, _ = p.NameWithContext(ctx)
	}
	l.mu.Lock()
	l.names[pid] = cachedName{name, now}
	l.mu.Unlock()
	return name
}

func (l *Lister) prune(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for pid, n := range l.names {
		if now.Sub(n.at) >= l.NameTTL {
			delete(l.names, pid)
		}
	}
}

func protoName(family, typ uint32) string {
	p := "tcp"
	if typ == syscall.SOCK_DGRAM {
		p = "udp"
	}
	if family == syscall.AF_INET6 {
		p += "6"
	}
	return p
}

func hostPort(a gnet.Addr) string {
	return net.JoinHostPort(a.IP, strconv.FormatUint(uint64(a.Port), 10))
}

// Cached returns the last listing when it is younger than maxAge, so the
// API and the one-second WebSocket tick share one read of /proc.
func (l *Lister) Cached(ctx context.Context, maxAge time.Duration) ([]Conn, error) {
	l.mu.Lock()
	if l.last != nil && time.Since(l.lastAt) < maxAge {
		out := l.last
		l.mu.Unlock()
		return out, nil
	}
	l.mu.Unlock()
	conns, err := l.List(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.last, l.lastAt = conns, time.Now()
	l.mu.Unlock()
	return conns, nil
}
