package siem

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"netmon/app/netguard"
	"netmon/store/record"
)

// Config is the forwarder of spec 2.5 notifiers.siem.
type Config struct {
	// Format is cef (default), leef, json or text.
	Format string
	// Transport is syslog-udp (default), syslog-tcp or http.
	Transport string
	// Target is host:port for syslog, a full URL for http.
	Target string
	// Token is sent verbatim as the Authorization header (http; empty =
	// not sent).
	Token string
	// Insecure skips TLS verification (http only).
	Insecure bool
	// Framing of syslog-tcp: "octet" (RFC 6587 octet counting, default)
	// or "newline".
	Framing string
	// Hostname is the syslog HOSTNAME field (os.Hostname when empty).
	Hostname string
}

// Forwarder sends events to one SIEM. Send is safe for concurrent use;
// the TCP connection is kept and re-dialled once when a write fails.
type Forwarder struct {
	cfg    Config
	guard  *netguard.Guard
	client *http.Client
	now    func() time.Time

	mu   sync.Mutex
	conn net.Conn
}

// New returns a forwarder; it dials nothing until the first Send.
func New(cfg Config, guard *netguard.Guard) *Forwarder {
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
		if cfg.Hostname == "" {
			cfg.Hostname = "-"
		}
	}
	f := &Forwarder{cfg: cfg, guard: guard, now: time.Now}
	if cfg.Transport == TransportHTTP {
		f.client = guard.HTTPClient(netguard.ClientOptions{Timeout: 10 * time.Second, InsecureSkipVerify: cfg.Insecure})
	}
	return f
}

// Config returns the forwarder's configuration.
func (f *Forwarder) Config() Config { return f.cfg }

// Send formats ev and delivers it.
func (f *Forwarder) Send(ctx context.Context, ev record.AlertEvent) error {
	line, err := Format(f.cfg.Format, ev)
	if err != nil {
		return err
	}
	switch f.cfg.Transport {
	case "", TransportUDP:
		return f.sendUDP(ctx, Frame(line, ev.Severity, f.now(), f.cfg.Hostname))
	case TransportTCP:
		return f.sendTCP(ctx, Frame(line, ev.Severity, f.now(), f.cfg.Hostname))
	case TransportHTTP:
		return f.sendHTTP(ctx, line)
	}
	return fmt.Errorf("siem transport %q: want syslog-udp, syslog-tcp or http", f.cfg.Transport)
}

func (f *Forwarder) sendUDP(ctx context.Context, msg string) error {
	c, err := f.guard.Dialer(5*time.Second, nil).DialContext(ctx, "udp", f.cfg.Target)
	if err != nil {
		return fmt.Errorf("siem dial udp: %w", err)
	}
	defer c.Close()
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		return fmt.Errorf("siem write udp: %w", err)
	}
	return nil
}

func (f *Forwarder) frameTCP(msg string) []byte {
	if f.cfg.Framing == "newline" {
		return []byte(msg + "\n")
	}
	return []byte(strconv.Itoa(len(msg)) + " " + msg)
}

// sendTCP writes on the kept connection; a failed write closes it and
// the message is written once more on a fresh one (the SIEM restarted).
func (f *Forwarder) sendTCP(ctx context.Context, msg string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := f.frameTCP(msg)
	var err error
	for try := 0; try < 2; try++ {
		if f.conn == nil {
			f.conn, err = f.guard.Dialer(5*time.Second, nil).DialContext(ctx, "tcp", f.cfg.Target)
			if err != nil {
				return fmt.Errorf("siem dial tcp: %w", err)
			}
		}
		_ = f.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err = f.conn.Write(b); err == nil && !f.peerClosed() {
			return nil
		}
		f.conn.Close()
		f.conn = nil
	}
	return fmt.Errorf("siem write tcp: %w", errors.Join(err, errors.New("connection lost")))
}

// peerClosed reports whether the peer closed the kept connection: a
// write into a socket the peer closed may still succeed once, so a
// non-blocking read looks for the EOF first.
func (f *Forwarder) peerClosed() bool {
	_ = f.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := bufio.NewReader(f.conn).Peek(1)
	_ = f.conn.SetReadDeadline(time.Time{})
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func (f *Forwarder) sendHTTP(ctx context.Context, line string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.cfg.Target, bytes.NewBufferString(line))
	if err != nil {
		// url.Parse quotes the target: its query or userinfo is often
		// the credential.
		return ErrBadTarget
	}
	ct := "text/plain; charset=utf-8"
	if f.cfg.Format == FormatJSON {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	if f.cfg.Token != "" {
		req.Header.Set("Authorization", f.cfg.Token)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		// The client's url.Error quotes the target; keep its cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("siem post: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return &HTTPError{Status: resp.StatusCode}
	}
	return nil
}

// ErrBadTarget is an HTTP target that is not a URL.
var ErrBadTarget = errors.New("siem target is not a valid URL")

// HTTPError is a non-2xx answer; its text carries the status only, never
// the remote body.
type HTTPError struct{ Status int }

func (e *HTTPError) Error() string {
	return "remote answered " + strconv.Itoa(e.Status) + " " + strings.ToLower(http.StatusText(e.Status))
}

// Close drops the kept TCP connection.
func (f *Forwarder) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn != nil {
		err := f.conn.Close()
		f.conn = nil
		return err
	}
	return nil
}
