// Package logging builds the process's structured logger (log/slog) and
// carries the request id through a context, so that every line logged with
// a request's context names the request without each caller adding it.
//
// It sits beside app/config: the CLI builds one *slog.Logger here and hands
// it, with a "component" attribute, to every component it wires.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Formats lists the accepted values of --log-format.
var Formats = []string{"text", "json"}

// Levels lists the accepted values of --log-level.
var Levels = []string{"debug", "info", "warn", "error"}

// New returns a logger writing to w in the given format ("text" or "json")
// at the given minimum level ("debug", "info", "warn", "error").
func New(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil || !contains(Levels, strings.ToLower(level)) {
		return nil, fmt.Errorf("log level %q: want one of %s", level, strings.Join(Levels, ", "))
	}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("log format %q: want one of %s", format, strings.Join(Formats, ", "))
	}
	return slog.New(contextHandler{h}), nil
}

type ctxKey struct{}

// WithRequestID returns a context carrying the request id; loggers built by
// New add it as the "request_id" attribute to every record logged with it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// RequestID returns the request id carried by ctx, or "".
func RequestID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// contextHandler adds the request id of the record's context. Wrapping the
// handler (rather than asking callers to add the attribute) is what makes
// "every log line of the request" hold for code deep inside a component.
type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
