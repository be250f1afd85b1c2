package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/textproto"
	"regexp"
	"strings"
	"syscall"

	"github.com/wneessen/go-mail"

	"netmon/alerting/siem"
	"netmon/app/netguard"
)

// Why a delivery failed, as the delivery log, the alert detail (any
// viewer reads it) and a "send test" answer show it. A failure is only
// ever one of these texts or "remote answered <status>": never the
// error of a library, which quotes the URL (its path, query or userinfo
// is often the credential), the address, or the peer's own words (an
// SMTP reply line, a response body). RELIABILITY case 30, issue 28.
const (
	ReasonNotConfigured = "channel not configured"
	ReasonBlocked       = "destination refused by the outbound guard"
	ReasonBadURL        = "invalid URL"
	ReasonBadAddress    = "invalid e-mail address"
	ReasonDNS           = "name not resolved"
	ReasonRefused       = "connection refused"
	ReasonUnreachable   = "network unreachable"
	ReasonTimeout       = "timeout"
	ReasonConnLost      = "connection lost"
	ReasonTLS           = "TLS failed"
	ReasonAuth          = "authentication failed"
	ReasonSender        = "sender refused"
	ReasonRecipient     = "recipient refused"
	ReasonMessage       = "message refused"
	ReasonServer        = "server refused"
	ReasonNoTicketID    = `ticket answer has no "id"`
	ReasonStore         = "hub storage error"
	ReasonCancelled     = "cancelled"
	ReasonFailed        = "delivery failed"
)

// failure is a classified delivery error: its text is the reason alone.
// It still answers errors.Is for ErrPermanent (the retry decision) and
// for the sentinels callers branch on.
type failure struct {
	reason string
	is     []error
}

func (f *failure) Error() string   { return f.reason }
func (f *failure) Unwrap() []error { return f.is }

// fail classifies err (nil stays nil; a failure stays as it is).
func fail(err error) error {
	if err == nil {
		return nil
	}
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	f = &failure{reason: Reason(err)}
	for _, s := range []error{ErrPermanent, ErrDisabled, netguard.ErrBlocked, errNoTicketID} {
		if errors.Is(err, s) {
			f.is = append(f.is, s)
		}
	}
	return f
}

// Reason names why err happened, in the words above.
func Reason(err error) string {
	var (
		f    *failure
		hs   httpStatusError
		sh   *siem.HTTPError
		se   *mail.SendError
		tp   *textproto.Error
		dns  *net.DNSError
		tout interface{ Timeout() bool }
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &f):
		return f.reason
	case errors.Is(err, ErrDisabled):
		return ReasonNotConfigured
	case errors.Is(err, netguard.ErrBlocked):
		return ReasonBlocked
	case errors.Is(err, errNoTicketID):
		return ReasonNoTicketID
	case errors.Is(err, errBadURL), errors.Is(err, siem.ErrBadTarget):
		return ReasonBadURL
	case errors.Is(err, errBadAddress):
		return ReasonBadAddress
	case errors.Is(err, errStore):
		return ReasonStore
	case errors.As(err, &hs):
		return hs.Error()
	case errors.As(err, &sh):
		return sh.Error()
	case isTLS(err):
		return ReasonTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &tout) && tout.Timeout():
		return ReasonTimeout
	case errors.Is(err, context.Canceled):
		return ReasonCancelled
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonRefused
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return ReasonUnreachable
	case errors.As(err, &dns):
		return ReasonDNS
	case errors.As(err, &se):
		return smtpStage(se)
	case errors.As(err, &tp):
		return smtpCode(tp.Code)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return ReasonConnLost
	case smtpNoAuth.MatchString(err.Error()):
		// go-mail's own words (fmt.Errorf, no type): the server offers
		// no AUTH, or no mechanism we allow.
		return ReasonAuth
	case smtpNoTLS.MatchString(err.Error()):
		return ReasonTLS
	}
	return ReasonFailed
}

// Sentinels of failures found before anything is sent.
var (
	errBadURL     = errors.New(ReasonBadURL)
	errBadAddress = errors.New(ReasonBadAddress)
	errStore      = errors.New(ReasonStore)
)

var (
	smtpNoAuth = regexp.MustCompile(`(?i)does not support SMTP AUTH|auth.* not supported|unsupported SMTP AUTH`)
	smtpNoTLS  = regexp.MustCompile(`(?i)does not support STARTTLS`)
)

// isTLS reports a failed TLS handshake or certificate check.
func isTLS(err error) bool {
	var (
		cv  *tls.CertificateVerificationError
		rh  tls.RecordHeaderError
		al  tls.AlertError
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		ci  x509.CertificateInvalidError
		ech *tls.ECHRejectionError
	)
	return errors.As(err, &cv) || errors.As(err, &rh) || errors.As(err, &al) || errors.As(err, &ua) ||
		errors.As(err, &he) || errors.As(err, &ci) || errors.As(err, &ech) || strings.HasPrefix(err.Error(), "tls: ")
}

// smtpStage names the SMTP command a send failed at (go-mail's reason).
func smtpStage(se *mail.SendError) string {
	switch se.Reason {
	case mail.ErrSMTPMailFrom, mail.ErrGetSender:
		return ReasonSender
	case mail.ErrSMTPRcptTo, mail.ErrGetRcpts:
		return ReasonRecipient
	case mail.ErrSMTPData, mail.ErrSMTPDataClose, mail.ErrWriteContent, mail.ErrNoUnencoded:
		return ReasonMessage
	case mail.ErrConnCheck:
		return ReasonConnLost
	}
	if c := se.ErrorCode(); c > 0 {
		return smtpCode(c)
	}
	return ReasonFailed
}

// smtpCode names an SMTP reply code outside a send (the greeting, EHLO,
// STARTTLS, AUTH).
func smtpCode(code int) string {
	switch code {
	case 454, 530, 534, 535, 538:
		return ReasonAuth
	}
	return ReasonServer
}

// PublicError returns a stored delivery error as it may be shown: one of
// the reasons above, else ReasonFailed. Rows written before the reasons
// existed carried library errors with the URL in them.
func PublicError(s string) string {
	if s == "" || known[s] || statusText.MatchString(s) {
		return s
	}
	return ReasonFailed
}

var (
	known = map[string]bool{ReasonNotConfigured: true, ReasonBlocked: true, ReasonBadURL: true, ReasonBadAddress: true,
		ReasonDNS: true, ReasonRefused: true, ReasonUnreachable: true, ReasonTimeout: true, ReasonConnLost: true, ReasonTLS: true,
		ReasonAuth: true, ReasonSender: true, ReasonRecipient: true, ReasonMessage: true, ReasonServer: true,
		ReasonNoTicketID: true, ReasonStore: true, ReasonCancelled: true, ReasonFailed: true}
	statusText = regexp.MustCompile(`^remote answered [1-5][0-9][0-9]( [a-z' -]+)?$`)
)
