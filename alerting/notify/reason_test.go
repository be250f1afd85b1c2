package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"netmon/alerting/siem"
	"netmon/app/netguard"
	"netmon/store/storetest"
)

// TestReason: every failure is named by a fixed reason; the URL a
// library error quotes (with its credential) and the peer's words never
// come through.
func TestReason(t *testing.T) {
	secretURL := "https://user:pw-SECRET@siem.example/ingest?key=SECRET"
	wrapURL := func(err error) error { return &url.Error{Op: "Post", URL: secretURL, Err: err} }
	tests := []struct {
		desc string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"refused, inside a url.Error", wrapURL(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), ReasonRefused},
		{"siem post quoting nothing but the cause", fmt.Errorf("siem post: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), ReasonRefused},
		{"timeout", wrapURL(context.DeadlineExceeded), ReasonTimeout},
		{"dns", wrapURL(&net.DNSError{Err: "no such host", Name: "siem.example"}), ReasonDNS},
		{"guard", permanent(fmt.Errorf("%w: 10.0.0.1:443 (private)", netguard.ErrBlocked)), ReasonBlocked},
		{"http status", permanent(httpStatusError{404}), "remote answered 404 not found"},
		{"siem status", &siem.HTTPError{Status: 503}, "remote answered 503 service unavailable"},
		{"smtp 535 in the dial", fmt.Errorf("dial failed: %w", &textproto.Error{Code: 535, Msg: "5.7.8 PEER-TEXT go away"}), ReasonAuth},
		{"smtp 421 in the dial", fmt.Errorf("dial failed: %w", &textproto.Error{Code: 421, Msg: "PEER-TEXT busy"}), ReasonServer},
		{"go-mail: no STARTTLS", errors.New(`STARTTLS mode set to: "TLSMandatory", but target host does not support STARTTLS`), ReasonTLS},
		{"reset", wrapURL(syscall.ECONNRESET), ReasonConnLost},
		{"bad siem target", siem.ErrBadTarget, ReasonBadURL},
		{"unknown, with the URL in its text", errors.New("weird " + secretURL), ReasonFailed},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got := fail(tt.err)
			text := ""
			if got != nil {
				text = got.Error()
			}
			if text != tt.want {
				t.Errorf("fail(%v) = %q, want %q", tt.err, text, tt.want)
			}
			if errors.Is(tt.err, ErrPermanent) != errors.Is(got, ErrPermanent) {
				t.Errorf("permanence lost: %v", got)
			}
		})
	}
}

// TestPublicError: a stored error is shown only when it is a reason; an
// older row quoting the URL is shown as "delivery failed".
func TestPublicError(t *testing.T) {
	for in, want := range map[string]string{
		"": "", ReasonRefused: ReasonRefused, "remote answered 500 internal server error": "remote answered 500 internal server error",
		`siem post: Post "https://h/x?key=SECRET": dial tcp 127.0.0.1:9: connect: connection refused`: ReasonFailed,
		"permanent: remote answered 404 not found":                                                    ReasonFailed,
	} {
		if got := PublicError(in); got != want {
			t.Errorf("PublicError(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEmailTestReasons: "send test" of the e-mail channel against the
// real SMTP server (aiosmtpd, whose greeting and refusals carry a marker)
// answers a classified reason only, never the server's reply line.
func TestEmailTestReasons(t *testing.T) {
	port, _, trust := smtpd(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	good := Settings{EmailHost: "127.0.0.1", EmailPort: port, EmailFrom: "netmon@example.test",
		EmailTo: []string{"noc@example.test"}, EmailUser: "testuser", EmailPass: "testpass"}
	with := func(f func(*Settings)) Settings {
		s := good
		s.EmailTo = append([]string{}, s.EmailTo...)
		f(&s)
		return s
	}
	tests := []struct {
		desc  string
		s     Settings
		trust bool
		want  string
	}{
		{"accepted", good, true, ""},
		{"wrong password (535)", with(func(s *Settings) { s.EmailPass = "wrong" }), true, ReasonAuth},
		{"recipient refused (550)", with(func(s *Settings) { s.EmailTo = []string{"refused@example.test"} }), true, ReasonRecipient},
		{"sender refused (553)", with(func(s *Settings) { s.EmailFrom = "refused@example.test" }), true, ReasonSender},
		{"certificate not trusted", good, false, ReasonTLS},
		{"nothing listening", with(func(s *Settings) { s.EmailPort = closedPort }), true, ReasonRefused},
	}
	db := storetest.OpenSQLite(t)
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			deps := Deps{Store: db, Guard: loopGuard, Settings: func() Settings { return tt.s }}
			if tt.trust {
				deps.EmailTLS = trust
			}
			n := New(storetest.Logger(t), testConfig(), deps, nil)
			err := n.Test(context.Background(), Email)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Test = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "PEER-TEXT") || strings.Contains(got, "5.") {
				t.Errorf("the server's words reached the answer: %q", got)
			}
		})
	}
}
