package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestNewRejectsUnknownValues(t *testing.T) {
	tests := []struct {
		desc, format, level, wantErr string
	}{
		{"unknown format", "xml", "info", `log format "xml"`},
		{"unknown level", "text", "loud", `log level "loud"`},
		{"numeric level", "text", "INFO+2", `log level "INFO+2"`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			_, err := New(&bytes.Buffer{}, tt.format, tt.level)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New(%q, %q) error = %v, want it to contain %q", tt.format, tt.level, err, tt.wantErr)
			}
		})
	}
}

func TestRequestIDInEveryLine(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(&buf, "json", "debug")
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithRequestID(context.Background(), "req-42")
	log.With("component", "x").InfoContext(ctx, "first")
	log.DebugContext(ctx, "second", "k", 1)
	log.Info("without context")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"req-42", "req-42", ""} {
		var rec map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatalf("line %d not JSON: %v", i, err)
		}
		got, _ := rec["request_id"].(string)
		if got != want {
			t.Errorf("line %d request_id = %q, want %q", i, got, want)
		}
	}
}

func TestLevelFilters(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(&buf, "text", "warn")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown")
	if strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), "shown") {
		t.Fatalf("level warn printed:\n%s", buf.String())
	}
}
