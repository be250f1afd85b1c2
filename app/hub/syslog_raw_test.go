package hub

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"netmon/app/config"
	"netmon/store/storetest"
)

// TestSyslogAlteredBytesKept is RELIABILITY case 4, "stored byte-exact or
// counted": datagrams with NUL and invalid UTF-8 sent over UDP are stored
// with U+FFFD in their text AND the datagram as received (raw_b64 in the
// API), each alteration counted once by reason; a clean message carries
// no raw copy.
func TestSyslogAlteredBytesKept(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		port := freeUDPPort(t)
		h := startTestHub(t, dsn, func(c *config.HubConfig) { c.Syslog.Addr = udpAddr(port) })
		sent := [][]byte{
			[]byte("<13>Nov 24 10:00:00 host app: clean line\n"),
			[]byte("<13>Nov 24 10:00:00 host app: nul\x00inside"),
			[]byte("<13>Nov 24 10:00:00 host app: bad \xff\xfe utf8"),
			[]byte("<13>Nov 24 10:00:00 h\xc3st app: both\x00and \xc0"),
		}
		conn, err := net.Dial("udp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, d := range sent {
			if _, err := conn.Write(d); err != nil {
				t.Fatal(err)
			}
		}
		c := h.client(t)
		var rows []struct {
			Host    string  `json:"host"`
			Message string  `json:"message"`
			Raw     *string `json:"raw_b64"` // nil: absent
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(rows) < len(sent) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			c.call("GET", "/api/v1/syslog?limit=10", nil).must(t, 200).decode(t, &rows)
		}
		if len(rows) != len(sent) {
			t.Fatalf("%d rows stored, want %d", len(rows), len(sent))
		}
		// Newest first. (A host name with invalid UTF-8 is no RFC 3164
		// header: the parser's fallback keeps the text after the time.)
		want := []struct{ host, message string }{
			{"127.0.0.1", "h\uFFFDst app: both\uFFFDand \uFFFD"},
			{"host", "bad \uFFFD\uFFFD utf8"},
			{"host", "nul\uFFFDinside"},
			{"host", "clean line"},
		}
		for i, r := range rows {
			d := sent[len(sent)-1-i]
			if r.Host != want[i].host || r.Message != want[i].message {
				t.Errorf("row %d: host %q message %q, want %q %q", i, r.Host, r.Message, want[i].host, want[i].message)
			}
			if i == len(rows)-1 {
				if r.Raw != nil {
					t.Errorf("clean message carries raw_b64 %q", *r.Raw)
				}
				continue
			}
			if r.Raw == nil {
				t.Errorf("row %d: no raw_b64", i)
				continue
			}
			raw, err := base64.StdEncoding.DecodeString(*r.Raw)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(raw, d) {
				t.Errorf("row %d: raw %q, want the datagram %q", i, raw, d)
			}
		}
		metrics := c.call("GET", "/metrics", nil).must(t, 200).body
		for _, line := range []string{`netmon_syslog_altered_total{reason="invalid_utf8"} 2`, `netmon_syslog_altered_total{reason="nul"} 2`} {
			if !strings.Contains(metrics, line+"\n") {
				t.Errorf("metrics lack %s", line)
			}
		}
	})
}
