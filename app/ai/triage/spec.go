package triage

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The nightly summary's spec (YAML ai.nightly.spec): daily:HH:MM,
// weekly:<mon..sun>:HH:MM, read in the hub's report zone, or
// interval:<minutes>. A slot is one occurrence, identified by its
// instant: the settings table records the last slot claimed, so each
// runs once.
//
// Daylight saving, as the report schedules: a time the zone skips (02:30
// on the spring-forward night) runs at the same offset after the change
// (03:30); a time the zone repeats runs once. Interval slots are the
// multiples of the interval since the Unix epoch, so every hub and every
// restart computes the same slots whatever the zone.

// Spec kinds.
const (
	SpecDaily    = "daily"
	SpecWeekly   = "weekly"
	SpecInterval = "interval"
)

// MaxIntervalMinutes bounds interval:<minutes> (a week).
const MaxIntervalMinutes = 7 * 24 * 60

// Spec is a parsed nightly spec. Build it with ParseSpec.
type Spec struct {
	kind     string
	wday     time.Weekday
	hour     int
	minute   int
	interval time.Duration
}

var weekdays = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday,
	"wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

// ParseSpec parses a nightly spec; its error names the value and the
// accepted forms (config validation shows it as is).
func ParseSpec(s string) (Spec, error) {
	bad := func() (Spec, error) {
		return Spec{}, fmt.Errorf("ai.nightly.spec %q: must be daily:HH:MM, weekly:<mon|tue|wed|thu|fri|sat|sun>:HH:MM or interval:<minutes> (1-%d)", s, MaxIntervalMinutes)
	}
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), ":")
	var sp Spec
	var clock []string
	switch {
	case len(parts) == 2 && parts[0] == SpecInterval:
		m, err := strconv.Atoi(parts[1])
		if err != nil || m < 1 || m > MaxIntervalMinutes || strings.HasPrefix(parts[1], "+") {
			return bad()
		}
		return Spec{kind: SpecInterval, interval: time.Duration(m) * time.Minute}, nil
	case len(parts) == 3 && parts[0] == SpecDaily:
		sp.kind, clock = SpecDaily, parts[1:]
	case len(parts) == 4 && parts[0] == SpecWeekly:
		d, ok := weekdays[parts[1]]
		if !ok {
			return bad()
		}
		sp.kind, sp.wday, clock = SpecWeekly, d, parts[2:]
	default:
		return bad()
	}
	h, herr := strconv.Atoi(clock[0])
	m, merr := strconv.Atoi(clock[1])
	if herr != nil || merr != nil || len(clock[0]) != 2 || len(clock[1]) != 2 || h < 0 || h > 23 || m < 0 || m > 59 {
		return bad()
	}
	sp.hour, sp.minute = h, m
	return sp, nil
}

// Kind is daily, weekly or interval.
func (sp Spec) Kind() string { return sp.kind }

// String is the spec in its canonical form.
func (sp Spec) String() string {
	switch sp.kind {
	case SpecInterval:
		return fmt.Sprintf("interval:%d", int(sp.interval/time.Minute))
	case SpecWeekly:
		return fmt.Sprintf("weekly:%s:%02d:%02d", strings.ToLower(sp.wday.String()[:3]), sp.hour, sp.minute)
	case SpecDaily:
		return fmt.Sprintf("daily:%02d:%02d", sp.hour, sp.minute)
	}
	return ""
}

// Period is the time a summary covers: a day, a week or the interval.
func (sp Spec) Period() time.Duration {
	switch sp.kind {
	case SpecInterval:
		return sp.interval
	case SpecWeekly:
		return 7 * 24 * time.Hour
	}
	return 24 * time.Hour
}

func (sp Spec) at(y int, m time.Month, d int, loc *time.Location) time.Time {
	return time.Date(y, m, d, sp.hour, sp.minute, 0, 0, loc)
}

func (sp Spec) ok(c time.Time) bool {
	return sp.kind != SpecWeekly || c.Weekday() == sp.wday
}

// Prev is the latest slot at or before t (zero for the zero Spec).
func (sp Spec) Prev(t time.Time, loc *time.Location) time.Time {
	if sp.kind == SpecInterval {
		n := int64(sp.interval / time.Second)
		u := t.Unix()
		return time.Unix(u-((u%n)+n)%n, 0).In(loc)
	}
	if sp.kind == "" {
		return time.Time{}
	}
	t = t.In(loc)
	y, m, d := t.Date()
	// Daily within 2 days, weekly within 8; 9 covers both with margin.
	for i := range 9 {
		if c := sp.at(y, m, d-i, loc); sp.ok(c) && !c.After(t) {
			return c
		}
	}
	return time.Time{}
}

// Next is the first slot after t (zero for the zero Spec).
func (sp Spec) Next(t time.Time, loc *time.Location) time.Time {
	if sp.kind == SpecInterval {
		return sp.Prev(t, loc).Add(sp.interval)
	}
	if sp.kind == "" {
		return time.Time{}
	}
	t = t.In(loc)
	y, m, d := t.Date()
	for i := range 9 {
		if c := sp.at(y, m, d+i, loc); sp.ok(c) && c.After(t) {
			return c
		}
	}
	return time.Time{}
}
