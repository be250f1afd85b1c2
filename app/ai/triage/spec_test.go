package triage

import (
	"strings"
	"testing"
	"time"
)

func TestParseSpec(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	at := func(loc *time.Location, y int, m time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, m, d, h, mi, s, 0, loc)
	}
	// 2026-11-28 is a Saturday; 2026-03-29 the spring-forward Sunday in Paris.
	sat := at(paris, 2026, 11, 28, 9, 0, 0)
	tests := []struct {
		in         string
		wantString string
		loc        *time.Location
		now        time.Time
		prev, next time.Time
		period     time.Duration
	}{
		{in: "daily:07:00", wantString: "daily:07:00", loc: paris, now: sat,
			prev: at(paris, 2026, 11, 28, 7, 0, 0), next: at(paris, 2026, 11, 29, 7, 0, 0), period: 24 * time.Hour},
		{in: " DAILY:23:59 ", wantString: "daily:23:59", loc: paris, now: sat,
			prev: at(paris, 2026, 11, 27, 23, 59, 0), next: at(paris, 2026, 11, 28, 23, 59, 0), period: 24 * time.Hour},
		{in: "daily:09:00", wantString: "daily:09:00", loc: paris, now: sat, // a slot at now is due now
			prev: sat, next: at(paris, 2026, 11, 29, 9, 0, 0), period: 24 * time.Hour},
		{in: "weekly:mon:08:30", wantString: "weekly:mon:08:30", loc: paris, now: sat,
			prev: at(paris, 2026, 11, 23, 8, 30, 0), next: at(paris, 2026, 11, 30, 8, 30, 0), period: 7 * 24 * time.Hour},
		{in: "weekly:Sat:10:00", wantString: "weekly:sat:10:00", loc: paris, now: sat,
			prev: at(paris, 2026, 11, 21, 10, 0, 0), next: at(paris, 2026, 11, 28, 10, 0, 0), period: 7 * 24 * time.Hour},
		{in: "interval:15", wantString: "interval:15", loc: time.UTC, now: at(time.UTC, 2026, 11, 28, 9, 7, 30),
			prev: at(time.UTC, 2026, 11, 28, 9, 0, 0), next: at(time.UTC, 2026, 11, 28, 9, 15, 0), period: 15 * time.Minute},
		// Interval slots are epoch multiples: the zone does not move them.
		{in: "interval:90", wantString: "interval:90", loc: paris, now: at(time.UTC, 2026, 11, 28, 9, 7, 30),
			prev: at(time.UTC, 2026, 11, 28, 9, 0, 0), next: at(time.UTC, 2026, 11, 28, 10, 30, 0), period: 90 * time.Minute},
		{in: "interval:10080", wantString: "interval:10080", loc: time.UTC, now: at(time.UTC, 2026, 11, 28, 9, 0, 0),
			prev: at(time.UTC, 2026, 11, 26, 0, 0, 0), next: at(time.UTC, 2026, 12, 3, 0, 0, 0), period: 7 * 24 * time.Hour},
		// 02:30 does not exist on the spring-forward night: it runs at 03:30.
		{in: "daily:02:30", wantString: "daily:02:30", loc: paris, now: at(paris, 2026, 3, 29, 12, 0, 0),
			prev: at(time.UTC, 2026, 3, 29, 1, 30, 0), next: at(paris, 2026, 3, 30, 2, 30, 0), period: 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			sp, err := ParseSpec(tt.in)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if got := sp.String(); got != tt.wantString {
				t.Errorf("String() = %q, want %q", got, tt.wantString)
			}
			if got := sp.Prev(tt.now, tt.loc); !got.Equal(tt.prev) {
				t.Errorf("Prev(%v) = %v, want %v", tt.now, got, tt.prev)
			}
			if got := sp.Next(tt.now, tt.loc); !got.Equal(tt.next) {
				t.Errorf("Next(%v) = %v, want %v", tt.now, got, tt.next)
			}
			if got := sp.Period(); got != tt.period {
				t.Errorf("Period() = %v, want %v", got, tt.period)
			}
		})
	}
}

func TestParseSpecRejects(t *testing.T) {
	for _, in := range []string{
		"", "daily", "daily:7:00", "daily:07:0", "daily:24:00", "daily:07:60", "daily:-1:00", "daily:07:00:00",
		"weekly:xyz:07:00", "weekly:monday:07:00", "weekly:mon:07", "weekly::07:00",
		"interval:", "interval:0", "interval:-5", "interval:10081", "interval:+5", "interval:1.5", "interval:abc", "interval:5:00",
		"monthly:1:07:00", "hourly:00", "07:00",
	} {
		t.Run(in, func(t *testing.T) {
			sp, err := ParseSpec(in)
			if err == nil {
				t.Fatalf("ParseSpec(%q) = %v, want an error", in, sp)
			}
		})
	}
	_, err := ParseSpec("daily:25:00")
	const want = `ai.nightly.spec "daily:25:00": must be daily:HH:MM, weekly:<mon|tue|wed|thu|fri|sat|sun>:HH:MM or interval:<minutes> (1-10080)`
	if err == nil || err.Error() != want {
		t.Errorf("error text = %v, want %s", err, want)
	}
}

// The summary's task names the span its spec covers.
func TestSummaryTaskPeriod(t *testing.T) {
	for spec, want := range map[string]string{
		"daily:07:00":      "Summarise the last 24 hours on this network",
		"weekly:mon:07:00": "Summarise the last 7 days on this network",
		"interval:1":       "Summarise the last minute on this network",
		"interval:45":      "Summarise the last 45 minutes on this network",
		"interval:60":      "Summarise the last hour on this network",
		"interval:360":     "Summarise the last 6 hours on this network",
	} {
		sp, err := ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := SummaryTask(sp); !strings.HasPrefix(got, want) {
			t.Errorf("SummaryTask(%s) = %q, want it to start %q", spec, got, want)
		}
	}
}
