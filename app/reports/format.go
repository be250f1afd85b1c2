package reports

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Every figure of a report is formatted here, once; the renderers print
// the strings as they are. The conventions:
//
//   - bytes in decimal (SI) units, three significant digits: "999 B",
//     "1.24 GB", "12.4 TB" (1 GB = 10^9 bytes, as network volumes are
//     counted);
//   - rates in bit/s, decimal: "85.3 Mbit/s";
//   - percentages with one decimal and a space: "97.2 %";
//   - counts grouped by three with a plain space: "1 234 567" (ISO 80000:
//     a space, never a comma or a dot, which read as decimals somewhere);
//   - dates as YYYY-MM-DD in the report's zone, times as YYYY-MM-DD HH:MM.

// fmtBytes formats a byte count with decimal units.
func fmtBytes(b float64) string {
	return fmtSI(b, "B")
}

// fmtBits formats a rate in bit/s with decimal units.
func fmtBits(bps float64) string {
	return fmtSI(bps, "bit/s")
}

// fmtSI prints v with an SI prefix and three significant digits.
func fmtSI(v float64, unit string) string {
	neg := v < 0
	v = math.Abs(v)
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for i < len(prefixes)-1 && v >= 999.5 { // 999.5 and more prints as 1000: the next prefix
		v /= 1000
		i++
	}
	var s string
	switch {
	case i == 0:
		s = strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	case v < 9.995:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	case v < 99.95:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	default:
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	if neg {
		s = "-" + s
	}
	return s + " " + prefixes[i] + unit
}

// fmtPct formats a percentage: "97.2 %".
func fmtPct(p float64) string {
	return strconv.FormatFloat(p, 'f', 1, 64) + " %"
}

// fmtChange formats a change in percent with its sign: "+12.0 %".
func fmtChange(p float64) string {
	if p >= 0 {
		return "+" + fmtPct(p)
	}
	return fmtPct(p)
}

// fmtCount groups an integer's digits by three with a space.
func fmtCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtDate prints t's day in loc.
func fmtDate(t time.Time, loc *time.Location) string {
	return t.In(loc).Format(time.DateOnly)
}

// fmtTime prints t to the minute in loc.
func fmtTime(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("2006-01-02 15:04")
}

// protoName names an IP protocol number.
func protoName(p string) string {
	switch p {
	case "1":
		return "ICMP"
	case "6":
		return "TCP"
	case "17":
		return "UDP"
	case "47":
		return "GRE"
	case "50":
		return "ESP"
	case "58":
		return "ICMPv6"
	case "132":
		return "SCTP"
	}
	return "IP protocol " + p
}

// plural picks the singular or plural word for n.
func pluralOf(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
