package reports

import (
	"testing"
	"time"
)

// TestParseSpec: the accepted forms and what is refused.
func TestParseSpec(t *testing.T) {
	tests := []struct {
		spec string
		want spec
		ok   bool
	}{
		{"daily:07:30", spec{kind: "daily", hour: 7, minute: 30}, true},
		{"weekly:mon:00:00", spec{kind: "weekly", wday: time.Monday, hour: 0, minute: 0}, true},
		{"WEEKLY:Sun:23:59", spec{kind: "weekly", wday: time.Sunday, hour: 23, minute: 59}, true},
		{"monthly:28:06:05", spec{kind: "monthly", mday: 28, hour: 6, minute: 5}, true},
		{"monthly:1:06:05", spec{kind: "monthly", mday: 1, hour: 6, minute: 5}, true},
		{"", spec{}, false},
		{"daily", spec{}, false},
		{"daily:7:30", spec{}, false},
		{"daily:24:00", spec{}, false},
		{"daily:07:60", spec{}, false},
		{"daily:07:30:00", spec{}, false},
		{"weekly:monday:07:30", spec{}, false},
		{"weekly:07:30", spec{}, false},
		{"monthly:29:07:30", spec{}, false},
		{"monthly:0:07:30", spec{}, false},
		{"monthly:-1:07:30", spec{}, false},
		{"hourly:30", spec{}, false},
		{"*/5 * * * *", spec{}, false},
	}
	for _, tt := range tests {
		got, err := parseSpec(tt.spec)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSpec(%q) = %+v, %v; want %+v ok=%v", tt.spec, got, err, tt.want, tt.ok)
		}
	}
}

// TestSlots: prev (latest slot at or before) and next (first after) in
// the schedule's zone, across Paris's daylight-saving changes of 2026
// (29 March 02:00 → 03:00, 25 October 03:00 → 02:00), on a monthly day
// 28 across February, and weekly.
func TestSlots(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	utc := time.UTC
	tests := []struct {
		desc     string
		spec     string
		loc      *time.Location
		now      string // in loc
		prev     string // RFC 3339
		next     string
		prevZone string
	}{
		{"daily, before today's slot", "daily:07:30", paris, "2026-11-28 07:29", "2026-11-27T07:30:00+01:00", "2026-11-28T07:30:00+01:00", "CET"},
		{"daily, at the slot", "daily:07:30", paris, "2026-11-28 07:30", "2026-11-28T07:30:00+01:00", "2026-11-29T07:30:00+01:00", "CET"},
		{"daily across spring forward", "daily:07:30", paris, "2026-03-29 08:00", "2026-03-29T07:30:00+02:00", "2026-03-30T07:30:00+02:00", "CEST"},
		{"daily slot skipped by spring forward runs at 03:30", "daily:02:30", paris, "2026-03-29 04:00", "2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00", "CEST"},
		{"daily slot repeated by fall back runs once, in winter time", "daily:02:30", paris, "2026-10-25 12:00", "2026-10-25T02:30:00+01:00", "2026-10-26T02:30:00+01:00", "CET"},
		{"daily across fall back", "daily:07:30", paris, "2026-10-25 07:31", "2026-10-25T07:30:00+01:00", "2026-10-26T07:30:00+01:00", "CET"},
		{"weekly monday, on a saturday", "weekly:mon:07:00", paris, "2026-11-28 12:00", "2026-11-23T07:00:00+01:00", "2026-11-30T07:00:00+01:00", "CET"},
		{"weekly monday, on monday before the slot", "weekly:mon:07:00", paris, "2026-11-30 06:59", "2026-11-23T07:00:00+01:00", "2026-11-30T07:00:00+01:00", "CET"},
		{"monthly 28 in march", "monthly:28:06:00", utc, "2026-03-01 00:00", "2026-02-28T06:00:00Z", "2026-03-28T06:00:00Z", "UTC"},
		{"monthly 28 before the slot", "monthly:28:06:00", utc, "2026-01-28 05:59", "2025-12-28T06:00:00Z", "2026-01-28T06:00:00Z", "UTC"},
		{"monthly across spring forward", "monthly:28:06:00", paris, "2026-03-30 00:00", "2026-03-28T06:00:00+01:00", "2026-04-28T06:00:00+02:00", "CET"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			sp, err := parseSpec(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			now := at(tt.now, tt.loc)
			p, n := sp.prev(now, tt.loc), sp.next(now, tt.loc)
			if got := p.Format(time.RFC3339); got != tt.prev {
				t.Errorf("prev = %s, want %s", got, tt.prev)
			}
			if zone, _ := p.Zone(); zone != tt.prevZone {
				t.Errorf("prev zone %s, want %s", zone, tt.prevZone)
			}
			if got := n.Format(time.RFC3339); got != tt.next {
				t.Errorf("next = %s, want %s", got, tt.next)
			}
		})
	}
}

// TestSlotsOnePerDay walks a year of Paris minutes at 10-minute steps
// for daily:02:30 (the hour DST skips and repeats): every day has
// exactly one slot, and prev never goes backwards.
func TestSlotsOnePerDay(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	sp, _ := parseSpec("daily:02:30")
	slots := map[int64]bool{}
	var last time.Time
	for now := at("2026-01-01 00:00", paris); now.Before(at("2027-01-01 00:00", paris)); now = now.Add(10 * time.Minute) {
		p := sp.prev(now, paris)
		if p.Before(last) {
			t.Fatalf("prev(%s) = %s went back from %s", now, p, last)
		}
		last = p
		slots[p.Unix()] = true
	}
	// 2025-12-31's slot plus one per day of 2026.
	if len(slots) != 366 {
		t.Errorf("%d distinct slots, want 366", len(slots))
	}
}
