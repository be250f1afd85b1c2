package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Class is what a caller branches on when a provider call fails.
type Class string

// The classes of failure. None of them carries the remote body: a
// provider's error text can echo the prompt (pseudonymised or not) or
// a proxy's page, and it ends up in logs, audit rows and the console.
const (
	// RateLimited is a 429 (or an in-stream rate-limit event); RetryAfter
	// holds the wait the provider asked for, when it said one.
	RateLimited Class = "rate_limited"
	// Unauthorized is a 401 or 403: a missing, wrong or revoked key.
	Unauthorized Class = "unauthorized"
	// NotFound is a 404: usually the model does not exist there, or the
	// base URL points at the wrong server.
	NotFound Class = "not_found"
	// BadRequest is a 400, 413 or 422: the provider refused the request
	// itself (context too long, unknown parameter).
	BadRequest Class = "bad_request"
	// Server is a 5xx (including 529 overloaded).
	Server Class = "server"
	// Remote is an error the provider reported inside a 200 stream.
	Remote Class = "remote"
	// BadResponse is a body that does not parse as the kind's format.
	BadResponse Class = "bad_response"
	// TooLarge is a line, event or whole response over its cap.
	TooLarge Class = "too_large"
	// Cut is a connection closed mid-stream before the end marker.
	Cut Class = "cut"
	// Timeout is no first byte, or no byte between chunks, in time, or
	// the whole call over Options.Timeout.
	Timeout Class = "timeout"
	// Canceled is the caller's context ending (a client that went away).
	Canceled Class = "canceled"
	// Unreachable is a failure to connect: DNS, refused, or the
	// outbound guard refusing the address.
	Unreachable Class = "unreachable"
)

// Error is every error this package returns from Chat, Next and Models.
// Its text is built only from our own words, the HTTP status, a
// token-shaped error code and the kind: never the API key, never the
// remote body.
type Error struct {
	Class Class
	// Kind is the provider kind that failed.
	Kind Kind
	// Op is "chat" or "models".
	Op string
	// Status is the HTTP status, 0 when none was received.
	Status int
	// Code is the provider's machine error code or type
	// ("model_not_found", "overloaded_error") when it has the shape of
	// an identifier; free text is dropped.
	Code string
	// RetryAfter is the wait a 429 asked for (0 when not said).
	RetryAfter time.Duration
	// Detail is our own description ("no first byte within 2s").
	Detail string
	// cause is kept for errors.Is on context and net errors; its text is
	// never part of Error().
	cause error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ai provider %s %s: %s", e.Kind, e.Op, e.Class)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " [%s]", e.Code)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, ", retry after %s", e.RetryAfter)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap exposes the cause (a context or net error) to errors.Is.
func (e *Error) Unwrap() error { return e.cause }

// ClassOf returns the class of err, or "" when err is not from here.
func ClassOf(err error) Class {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Class
	}
	return ""
}

// codeShape is what a provider error code must look like to be kept.
var codeShape = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,64}$`)

func cleanCode(s string) string {
	if codeShape.MatchString(s) {
		return s
	}
	return ""
}

// classifyStatus maps a non-2xx status to a class.
func classifyStatus(status int) Class {
	switch {
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Unauthorized
	case status == http.StatusNotFound:
		return NotFound
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		return BadRequest
	case status >= 500:
		return Server
	default:
		return BadResponse
	}
}

// nowFunc is the clock Retry-After dates are measured against.
var nowFunc = time.Now

// parseRetryAfter reads a Retry-After value: delay-seconds or an
// HTTP-date (RFC 9110 10.2.3). A date in the past, or garbage, is 0.
func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		// Over a day is a provider mistake; cap it so a caller's timer stays sane.
		return min(time.Duration(n)*time.Second, 24*time.Hour)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(nowFunc()); d > 0 {
			return min(d.Round(time.Second), 24*time.Hour)
		}
	}
	return 0
}

// transportError classifies an error from http.Client.Do or a body
// read. Only the net error's own text is kept (addresses, "connection
// refused"); a *url.Error is unwrapped so the URL is not repeated.
func (c *client) transportError(op string, err error, wd *watchdog, parent context.Context) *Error {
	e := &Error{Kind: c.kind, Op: op, cause: err}
	if phase := wd.firedPhase(); phase != "" {
		e.Class, e.Detail = Timeout, phase
		return e
	}
	if parent.Err() != nil {
		if errors.Is(parent.Err(), context.DeadlineExceeded) {
			e.Class, e.Detail = Timeout, "call deadline passed"
		} else {
			e.Class = Canceled
		}
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		e.Class, e.Detail = Timeout, "network timeout"
		return e
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		e.Class, e.Detail = Unreachable, oe.Error()
		return e
	}
	var de *net.DNSError
	if errors.As(err, &de) {
		e.Class, e.Detail = Unreachable, de.Error()
		return e
	}
	e.Class, e.Detail = Unreachable, safeText(err.Error())
	return e
}

// safeText keeps an error text of ours short and on one line.
func safeText(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
