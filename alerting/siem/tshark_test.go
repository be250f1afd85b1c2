package siem

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTsharkDecodesSyslog captures on loopback while a CEF and a LEEF
// line are sent over UDP, and lets Wireshark's syslog dissector (code we
// did not write) read them back: facility local0 (16), level critical
// (2) for severity 9, hostname, and the message intact.
func TestTsharkDecodesSyslog(t *testing.T) {
	bin := peer(t, "tshark")
	port := freePort(t)
	pcap := filepath.Join(t.TempDir(), "cap.pcapng")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	capture := exec.CommandContext(ctx, bin, "-q", "-i", "lo", "-f", fmt.Sprintf("udp port %d", port), "-w", pcap, "-c", "2")
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	// tshark needs a moment before it captures: send until two packets
	// are in (it stops after -c 2), a few seconds at most.
	done := make(chan error, 1)
	go func() { done <- capture.Wait() }()
	target := fmt.Sprintf("127.0.0.1:%d", port)
	at := time.Date(2026, 11, 25, 8, 7, 6, 0, time.UTC)
	var sent []string
loop:
	for i := 0; ; i++ {
		format := []string{FormatCEF, FormatLEEF}[i%2]
		f := New(Config{Format: format, Target: target, Hostname: "hub1"}, loopback)
		f.now = func() time.Time { return at }
		if err := f.Send(context.Background(), portEvent); err != nil {
			t.Fatal(err)
		}
		line, _ := Format(format, portEvent)
		sent = append(sent, line)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("tshark: %v", err)
			}
			break loop
		case <-time.After(300 * time.Millisecond):
		}
	}
	out, err := exec.Command(bin, "-r", pcap, "-d", fmt.Sprintf("udp.port==%d,syslog", port), "-T", "fields", "-E", "separator=/t",
		"-e", "syslog.facility", "-e", "syslog.level", "-e", "syslog.hostname", "-e", "syslog.msg").Output()
	if err != nil {
		t.Fatalf("tshark -r: %v", err)
	}
	rows := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(rows) != 2 {
		t.Fatalf("tshark decoded %d packets, want 2: %q", len(rows), out)
	}
	for _, r := range rows {
		f := strings.SplitN(r, "\t", 4)
		if len(f) != 4 || f[0] != "16" || f[1] != "2" || f[2] != "hub1" {
			t.Errorf("tshark fields %q, want facility 16, level 2, hostname hub1", f)
			continue
		}
		// tshark's msg is the part after the PRI; it must end with one of
		// the lines sent (LEEF's tabs shown as tshark prints them).
		ok := false
		for _, s := range sent {
			if strings.HasSuffix(f[3], "netmon: "+s) || strings.HasSuffix(f[3], "netmon: "+strings.ReplaceAll(s, "\t", `\t`)) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("tshark msg %q is none of the lines sent", f[3])
		}
	}
	_ = os.Remove(pcap)
}
