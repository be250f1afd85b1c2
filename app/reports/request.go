package reports

import (
	"net/mail"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"netmon/app/errs"
	"netmon/app/reports/model"
)

// Limits of a request and of a schedule (spec 8: days 1–90).
const (
	MinDays       = 1
	MaxDays       = 90
	MaxRecipients = 50
	MaxNameLen    = 100
	MaxSiteLen    = 128
)

// defaultDays is the range of a request with Days 0.
var defaultDays = map[string]int{model.TypeTraffic: 7, model.TypeEnterprise: 30, model.TypeCompliance: 30}

// normalize validates req and fills its defaults: type traffic, the
// type's days, format html, Now the service's clock. An error is an
// errs Invalid naming the parameter (type, days, format, site).
func (s *Service) normalize(req Request) (Request, error) {
	if req.Type == "" {
		req.Type = model.TypeTraffic
	}
	def, ok := defaultDays[req.Type]
	if !ok {
		return req, errs.InvalidField("type", "must be traffic, enterprise or compliance")
	}
	if req.Days == 0 {
		req.Days = def
	}
	if req.Days < MinDays || req.Days > MaxDays {
		return req, errs.InvalidField("days", "must be %d to %d", MinDays, MaxDays)
	}
	if req.Format == "" {
		req.Format = FormatHTML
	}
	if req.Format != FormatHTML && req.Format != FormatPDF {
		return req, errs.InvalidField("format", "must be html or pdf")
	}
	if err := checkSite(req.Site); err != nil {
		return req, err
	}
	if req.Now.IsZero() {
		req.Now = s.deps.Now()
	}
	return req, nil
}

func checkSite(site string) error {
	if len(site) > MaxSiteLen || !utf8.ValidString(site) || strings.IndexFunc(site, unicode.IsControl) >= 0 {
		return errs.InvalidField("site", "must be a site name of at most %d bytes", MaxSiteLen)
	}
	return nil
}

// contentType of a format.
func contentType(format string) string {
	if format == FormatPDF {
		return "application/pdf"
	}
	return "text/html; charset=utf-8"
}

// filename is netmon-<type>-<site|all>-<fromYYYYMMDD>-<toYYYYMMDD>.<ext>:
// the first and the last day of the range (To is excluded) in the zone
// the report's times are in.
func filename(typ, site, format string, from, to time.Time) string {
	s := "all"
	if site != "" {
		s = slug(site)
	}
	last := to.Add(-time.Second)
	if !to.After(from) {
		last = from
	}
	return "netmon-" + typ + "-" + s + "-" + from.Format("20060102") + "-" + last.Format("20060102") + "." + format
}

// slug keeps [a-z0-9] of a site name (lower-cased) and turns every other
// run into one "-"; a name of no such character is "site".
func slug(site string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(site) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "site"
	}
	return b.String()
}

// normalizeSchedule validates in and fills its defaults (type and days
// as a request, format pdf, the configured zone). Errors name the field:
// name, type, days, format, site, recipients, spec, timezone.
func (s *Service) normalizeSchedule(in ScheduleInput) (ScheduleInput, spec, *time.Location, error) {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || utf8.RuneCountInString(in.Name) > MaxNameLen || strings.IndexFunc(in.Name, unicode.IsControl) >= 0 {
		return in, spec{}, nil, errs.InvalidField("name", "must be 1 to %d characters", MaxNameLen)
	}
	if in.Format == "" {
		in.Format = FormatPDF // a mailed report is a PDF unless asked otherwise
	}
	req, err := s.normalize(Request{Type: in.Type, Days: in.Days, Format: in.Format, Site: in.Site})
	if err != nil {
		return in, spec{}, nil, err
	}
	in.Type, in.Days, in.Format = req.Type, req.Days, req.Format
	if len(in.Recipients) > MaxRecipients {
		return in, spec{}, nil, errs.InvalidField("recipients", "at most %d addresses", MaxRecipients)
	}
	for i, r := range in.Recipients {
		r = strings.TrimSpace(r)
		a, err := mail.ParseAddress(r)
		// A bare address only: "Name <a@b>" would be mailed as typed, and
		// a list in one entry would escape the bound above.
		if err != nil || a.Name != "" || a.Address != r {
			return in, spec{}, nil, errs.InvalidField("recipients", "%q is not an e-mail address", clip(in.Recipients[i], 80))
		}
		in.Recipients[i] = r
	}
	sp, err := parseSpec(in.Spec)
	if err != nil {
		return in, spec{}, nil, errs.InvalidField("spec", "%s", err.Error())
	}
	if in.Timezone == "" {
		in.Timezone = s.cfg.Timezone
	}
	loc, err := time.LoadLocation(in.Timezone)
	if err != nil || in.Timezone == "Local" {
		return in, spec{}, nil, errs.InvalidField("timezone", "%q is not an IANA time zone", clip(in.Timezone, 80))
	}
	return in, sp, loc, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
