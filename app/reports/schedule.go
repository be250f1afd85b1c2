package reports

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// A schedule's spec (Schedule.Spec): daily:HH:MM, weekly:<mon..sun>:HH:MM
// or monthly:<1-28>:HH:MM, read in the schedule's zone. A slot is one
// occurrence, identified by its instant (Unix s): the database records
// the last slot claimed, so each runs once.
//
// Daylight saving: a time the zone skips (02:30 on the spring-forward
// night in Europe/Paris) runs at the same wall-clock offset after the
// change (03:30); a time the zone repeats (02:30 on the fall-back night)
// runs once, at the second occurrence (winter time, as time.Date picks). Monthly days stop at 28 so every
// month has the slot.

type spec struct {
	kind   string // daily, weekly, monthly
	wday   time.Weekday
	mday   int
	hour   int
	minute int
}

var weekdays = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday,
	"wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

var errSpec = errors.New("must be daily:HH:MM, weekly:<mon|tue|wed|thu|fri|sat|sun>:HH:MM or monthly:<1-28>:HH:MM")

func parseSpec(s string) (spec, error) {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), ":")
	var sp spec
	var clock []string
	switch {
	case len(parts) == 3 && parts[0] == "daily":
		sp.kind, clock = "daily", parts[1:]
	case len(parts) == 4 && parts[0] == "weekly":
		d, ok := weekdays[parts[1]]
		if !ok {
			return spec{}, errSpec
		}
		sp.kind, sp.wday, clock = "weekly", d, parts[2:]
	case len(parts) == 4 && parts[0] == "monthly":
		d, err := strconv.Atoi(parts[1])
		if err != nil || d < 1 || d > 28 || len(parts[1]) > 2 {
			return spec{}, errSpec
		}
		sp.kind, sp.mday, clock = "monthly", d, parts[2:]
	default:
		return spec{}, errSpec
	}
	h, herr := strconv.Atoi(clock[0])
	m, merr := strconv.Atoi(clock[1])
	if herr != nil || merr != nil || len(clock[0]) != 2 || len(clock[1]) != 2 || h < 0 || h > 23 || m < 0 || m > 59 {
		return spec{}, errSpec
	}
	sp.hour, sp.minute = h, m
	return sp, nil
}

// at is the slot of the day y-m-d (normalised by time.Date) in loc.
func (sp spec) at(y int, m time.Month, d int, loc *time.Location) time.Time {
	return time.Date(y, m, d, sp.hour, sp.minute, 0, 0, loc)
}

// ok reports whether day c is a day of the spec.
func (sp spec) ok(c time.Time) bool {
	switch sp.kind {
	case "weekly":
		return c.Weekday() == sp.wday
	case "monthly":
		return c.Day() == sp.mday
	}
	return true
}

// prev is the latest slot at or before t.
func (sp spec) prev(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	y, m, d := t.Date()
	if sp.kind == "monthly" {
		for i := range 3 {
			if c := sp.at(y, m-time.Month(i), sp.mday, loc); !c.After(t) {
				return c
			}
		}
	}
	// Daily within 2 days, weekly within 8; 9 covers both with margin.
	for i := range 9 {
		if c := sp.at(y, m, d-i, loc); sp.ok(c) && !c.After(t) {
			return c
		}
	}
	return time.Time{}
}

// next is the first slot after t.
func (sp spec) next(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	y, m, d := t.Date()
	if sp.kind == "monthly" {
		for i := range 3 {
			if c := sp.at(y, m+time.Month(i), sp.mday, loc); c.After(t) {
				return c
			}
		}
	}
	for i := range 9 {
		if c := sp.at(y, m, d+i, loc); sp.ok(c) && c.After(t) {
			return c
		}
	}
	return time.Time{}
}
