package reports

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"netmon/store"
)

// errNoMailer is the delivery of a hub without an e-mail sender.
var errNoMailer = errors.New("e-mail not configured")

// deliver mails out to sc's recipients and records the outcome as
// entry's Delivery ("sent to N" or "failed: <reason>"); no recipient
// leaves it empty. It returns the run's outcome.
func (s *Service) deliver(ctx context.Context, sc store.ReportSchedule, out *Output, entry *ArchiveEntry, loc *time.Location) string {
	if len(sc.Recipients) == 0 {
		return outcomeNoRecipient
	}
	var err error
	if s.deps.Mailer == nil {
		err = errNoMailer
	} else {
		err = s.deps.Mailer.SendReport(ctx, sc.Recipients, mailSubject(sc, entry, loc), mailBody(sc, entry, loc), out.Filename, out.ContentType, out.Body)
	}
	outcome := outcomeSent
	entry.Delivery = fmt.Sprintf("sent to %d", len(sc.Recipients))
	if err != nil {
		// The Mailer's errors are classified texts (never the server's
		// words): shown as they are.
		outcome, entry.Delivery = outcomeMailFailed, "failed: "+err.Error()
		s.log.Warn("scheduled report not mailed", "schedule", sc.ID, "archive", entry.ID, "err", err)
	}
	if err := s.deps.DB.SetReportDelivery(context.WithoutCancel(ctx), entry.ID, entry.Delivery); err != nil {
		s.log.Error("record report delivery", "archive", entry.ID, "err", err)
	}
	return outcome
}

func mailSubject(sc store.ReportSchedule, e *ArchiveEntry, loc *time.Location) string {
	site := sc.Site
	if site == "" {
		site = "all sites"
	}
	return fmt.Sprintf("[netmon] %s report, %s, %s", sc.Type, site, rangeText(e, loc))
}

// rangeText is the report's first and last day in the report's zone,
// the dates of its file name.
func rangeText(e *ArchiveEntry, loc *time.Location) string {
	from := time.Unix(e.From, 0).In(loc).Format("2006-01-02")
	to := time.Unix(e.To-1, 0).In(loc).Format("2006-01-02")
	if e.To <= e.From {
		to = from
	}
	return from + " to " + to
}

// mailBody says what is attached and how to check it.
func mailBody(sc store.ReportSchedule, e *ArchiveEntry, loc *time.Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The %s report of schedule %q (%s, %s) is attached: %s.\n\n", sc.Type, sc.Name, sc.Spec, sc.Timezone, e.Filename)
	fmt.Fprintf(&b, "Range:       %s (%d days)\n", rangeText(e, loc), e.Days)
	fmt.Fprintf(&b, "Archive id:  %d\n", e.ID)
	fmt.Fprintf(&b, "SHA-256:     %s\n", e.SHA256)
	fmt.Fprintf(&b, "Data SHA-256: %s\n\n", e.DataSHA256)
	b.WriteString("Check the attachment: sha256sum " + e.Filename + " prints the SHA-256 above.\n")
	return b.String()
}
