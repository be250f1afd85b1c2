package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/wneessen/go-mail"
)

// ErrEmailNotConfigured is SendReport's answer when the e-mail channel
// has no server or sender: its text is what the report's delivery shows.
var ErrEmailNotConfigured = errors.New("e-mail not configured (set the alert e-mail channel's server and sender)")

// SendReport mails a generated report (app/reports' schedules) to to,
// attaching data as filename, through the alert e-mail channel's server:
// the same client as the alert mails (guarded dialer, STARTTLS policy,
// authentication, timeout). The channel's own recipients are not used.
// A failure is classified: its text is one of the Reason texts, never the
// server's reply.
func (n *Notifier) SendReport(ctx context.Context, to []string, subject, body, filename, contentType string, data []byte) error {
	s := n.dep.Settings()
	if s.EmailHost == "" || s.EmailFrom == "" {
		return ErrEmailNotConfigured
	}
	if len(to) == 0 {
		return fail(permanent(fmt.Errorf("%w: no recipient", errBadAddress)))
	}
	c, err := n.mailClient(s)
	if err != nil {
		return fail(err)
	}
	m := mail.NewMsg()
	if err := m.From(s.EmailFrom); err != nil {
		return fail(permanent(fmt.Errorf("%w: email_from: %w", errBadAddress, err)))
	}
	if err := m.To(to...); err != nil {
		return fail(permanent(fmt.Errorf("%w: recipients: %w", errBadAddress, err)))
	}
	m.Subject(oneLine(subject))
	m.SetDate()
	m.SetMessageID()
	m.SetGenHeader("X-Netmon-Report", filename)
	m.SetBodyString(mail.TypeTextPlain, body)
	if err := m.AttachReader(filename, bytes.NewReader(data), mail.WithFileContentType(mail.ContentType(contentType))); err != nil {
		return fail(permanent(fmt.Errorf("attach report: %w", err)))
	}
	if err := c.DialAndSendWithContext(ctx, m); err != nil {
		return fail(classifySMTP(err))
	}
	return nil
}
