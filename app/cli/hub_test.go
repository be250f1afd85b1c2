package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the hub's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestHubCommandWithSpecStyleFlags runs `netmon hub` exactly as the spec
// writes it (single-dash long flags), checks it serves, then cancels its
// context as SIGTERM would and expects a clean exit.
func TestHubCommandWithSpecStyleFlags(t *testing.T) {
	port := freePort(t)
	db := filepath.Join(t.TempDir(), "netmon.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"hub", "-port", fmt.Sprint(port), "-db", db, "-log-format", "json", "-retention-hours=24", "-prune=false", "-vault-key-file", filepath.Join(t.TempDir(), "vault.key"), "-record-dir", filepath.Join(t.TempDir(), "rec"), "-geoip-dir", t.TempDir(), "-ip-online-lookup=false"}, strings.NewReader(""), io.Discard, &stderr)
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case code := <-done:
			t.Fatalf("hub exited with %d before serving:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("hub not ready after 20 s:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("database file not created: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("hub did not stop within 15 s of the signal")
	}
	logs := stderr.String()
	for _, want := range []string{`"msg":"hub started"`, `"retention_hours":24`, `"prune":false`, `"msg":"signal received, stopping"`, `"msg":"hub stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}
