package reports

import (
	"testing"
	"time"

	"netmon/app/reports/model"
	"netmon/store"
)

// TestFormat: every figure's printed form (format.go's conventions),
// at the unit boundaries where rounding moves to the next prefix.
func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{fmtBytes(0), "0 B"},
		{fmtBytes(999), "999 B"},
		{fmtBytes(999.6), "1.00 kB"},
		{fmtBytes(1000), "1.00 kB"},
		{fmtBytes(1240), "1.24 kB"},
		{fmtBytes(9994), "9.99 kB"},
		{fmtBytes(9995), "10.0 kB"},
		{fmtBytes(99_950), "100 kB"},
		{fmtBytes(999_499), "999 kB"},
		{fmtBytes(999_500), "1.00 MB"},
		{fmtBytes(1.24e9), "1.24 GB"},
		{fmtBytes(12.4e12), "12.4 TB"},
		{fmtBytes(-2e6), "-2.00 MB"},
		{fmtBits(85.3e6), "85.3 Mbit/s"},
		{fmtPct(97.24), "97.2 %"},
		{fmtPct(100), "100.0 %"},
		{fmtChange(12), "+12.0 %"},
		{fmtChange(-3.05), "-3.0 %"},
		{fmtCount(0), "0"},
		{fmtCount(999), "999"},
		{fmtCount(1000), "1 000"},
		{fmtCount(1234567), "1 234 567"},
		{fmtCount(-1234), "-1 234"},
		{protoName("6"), "TCP"},
		{protoName("89"), "IP protocol 89"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %q, want %q", i, c.got, c.want)
		}
	}
}

// TestPeriod: the range is the days whole days ending at the start of
// now's day in the report's zone, DST days included (23 or 25 hours).
func TestPeriod(t *testing.T) {
	ist, _ := time.LoadLocation("Europe/Istanbul")
	paris, _ := time.LoadLocation("Europe/Paris")
	if ist == nil || paris == nil {
		t.Fatal("time zone database missing")
	}
	cases := []struct {
		now      time.Time
		days     int
		loc      *time.Location
		from, to string // RFC 3339 in UTC
		ndays    int
	}{
		{time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC), 7, time.UTC, "2026-11-20T00:00:00Z", "2026-11-27T00:00:00Z", 7},
		{time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), 1, time.UTC, "2026-11-26T00:00:00Z", "2026-11-27T00:00:00Z", 1},
		// 22:30 UTC is already the 28th in Istanbul (+03:00).
		{time.Date(2026, 11, 27, 22, 30, 0, 0, time.UTC), 1, ist, "2026-11-26T21:00:00Z", "2026-11-27T21:00:00Z", 1},
		// Paris leaves summer time on 2026-10-25: that day has 25 hours.
		{time.Date(2026, 10, 27, 12, 0, 0, 0, time.UTC), 3, paris, "2026-10-23T22:00:00Z", "2026-10-26T23:00:00Z", 3},
	}
	for i, c := range cases {
		p := reportPeriodOf(c.now, c.days, "", c.loc)
		if got := p.from.UTC().Format(time.RFC3339); got != c.from {
			t.Errorf("case %d: from %s, want %s", i, got, c.from)
		}
		if got := p.to.UTC().Format(time.RFC3339); got != c.to {
			t.Errorf("case %d: to %s, want %s", i, got, c.to)
		}
		if len(p.days) != c.ndays || p.prev.To != p.cur.From || p.cur.From-p.prev.From < int64(c.days)*86400-3600 {
			t.Errorf("case %d: %d days, prev %d-%d, cur %d-%d", i, len(p.days), p.prev.From, p.prev.To, p.cur.From, p.cur.To)
		}
	}
}

// TestTopTableAtLeast: a top read whose count is a lower bound (a rolled
// day kept only its busiest keys) makes a table that says so.
func TestTopTableAtLeast(t *testing.T) {
	for _, c := range []struct {
		top     store.ReportTop
		more    int
		atLeast bool
	}{
		{store.ReportTop{Rows: []store.ReportRow{{}}, Total: 5}, 4, false},
		{store.ReportTop{Rows: []store.ReportRow{{}}, Total: 5, AtLeast: true}, 4, true},
		{store.ReportTop{Rows: []store.ReportRow{{}}, Total: 1}, 0, false},
	} {
		tb := topTable("", []model.Column{textCol("k")}, &c.top, func(store.ReportRow) []string { return []string{"x"} })
		if tb.More != c.more || tb.MoreAtLeast != c.atLeast {
			t.Errorf("%+v: More %d MoreAtLeast %v, want %d %v", c.top, tb.More, tb.MoreAtLeast, c.more, c.atLeast)
		}
	}
}
