package notify

import (
	"context"
	"errors"
	"fmt"
	"net/textproto"
	"strings"
	"time"

	"github.com/wneessen/go-mail"

	"netmon/alerting/siem"
	"netmon/store/record"
)

// sendMail sends ev by SMTP through go-mail: port 0 means 587, STARTTLS
// whenever the server offers it — and required when a user is set, so a
// password never crosses in clear — and authentication (the best
// mechanism the server offers) when email_user is set. The connection is
// dialled through the outbound guard.
func (n *Notifier) sendMail(ctx context.Context, s Settings, ev record.AlertEvent) error {
	c, err := n.mailClient(s)
	if err != nil {
		return err
	}
	m := mail.NewMsg()
	if err := m.From(s.EmailFrom); err != nil {
		return permanent(fmt.Errorf("%w: email_from: %w", errBadAddress, err))
	}
	if err := m.To(s.EmailTo...); err != nil {
		return permanent(fmt.Errorf("%w: email_to: %w", errBadAddress, err))
	}
	m.Subject(fmt.Sprintf("[netmon] %s %s: %s", severityWord(ev.Severity), siem.Label(ev.Kind), oneLine(ev.Message)))
	m.SetDate()
	m.SetMessageID()
	m.SetGenHeader("X-Netmon-Event", fmt.Sprint(ev.ID))
	m.SetGenHeader("X-Netmon-Kind", ev.Kind)
	m.SetBodyString(mail.TypeTextPlain, mailBody(ev))
	if err := c.DialAndSendWithContext(ctx, m); err != nil {
		return classifySMTP(err)
	}
	return nil
}

// mailClient is the SMTP client of the e-mail channel s, shared by the
// alert mails and the report mails (report_mail.go).
func (n *Notifier) mailClient(s Settings) (*mail.Client, error) {
	port := s.EmailPort
	if port == 0 {
		port = 587
	}
	policy := mail.TLSOpportunistic
	if s.EmailUser != "" {
		policy = mail.TLSMandatory
	}
	opts := []mail.Option{
		mail.WithTLSPolicy(policy),
		mail.WithPort(port),
		mail.WithTimeout(n.cfg.Timeout),
		mail.WithHELO(n.hostname),
		mail.WithDialContextFunc(n.guard.Dialer(n.cfg.Timeout, nil).DialContext),
	}
	if n.emailTLS != nil {
		opts = append(opts, mail.WithTLSConfig(n.emailTLS.Clone()))
	}
	if s.EmailUser != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(s.EmailUser), mail.WithPassword(s.EmailPass))
	}
	c, err := mail.NewClient(s.EmailHost, opts...)
	if err != nil {
		return nil, permanent(fmt.Errorf("smtp client: %w", err))
	}
	return c, nil
}

// mailBody is the plain-text body of an alert e-mail.
func mailBody(ev record.AlertEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", ev.Message)
	fmt.Fprintf(&b, "Kind:     %s (%s)\n", ev.Kind, siem.Label(ev.Kind))
	fmt.Fprintf(&b, "Severity: %d\n", ev.Severity)
	fmt.Fprintf(&b, "Key:      %s\n", orDash(ev.Key))
	fmt.Fprintf(&b, "Site:     %s\n", orDash(ev.Site))
	fmt.Fprintf(&b, "Fired:    %s\n", time.Unix(ev.TS, 0).UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "Event:    %d\n", ev.ID)
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// classifySMTP makes what no retry can fix permanent: a refused
// password (535), a failed certificate check, a 5xx reply to the message;
// a 4xx (454 included) and a lost connection are retried. send names the
// failure (reason.go): the server's reply line is never shown.
func classifySMTP(err error) error {
	err = classify(err)
	var se *mail.SendError
	if errors.As(err, &se) {
		if se.IsTemp() || se.ErrorCode() < 500 {
			return err
		}
		return permanent(err)
	}
	var tp *textproto.Error
	if errors.As(err, &tp) && tp.Code < 500 {
		return err
	}
	if r := Reason(err); r == ReasonAuth || r == ReasonTLS {
		return permanent(err)
	}
	return err
}
