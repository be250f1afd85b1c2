package facts

import (
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"time"

	"netmon/app/ai/prompt"
)

type fieldT = prompt.Field

// list gathers the facts of one request.
type list struct {
	facts []prompt.Fact
	ps    *prompt.Pseudonyms
	// unbound is a reader of every site: facts then say which site a row
	// is of (a site-bound reader's are all of its own).
	unbound bool
}

// add appends a fact; empty data fields are left out.
func (l *list) add(source string, prio int, text string, data ...prompt.Field) {
	kept := data[:0:0]
	for _, f := range data {
		if f.Value != "" {
			kept = append(kept, f)
		}
	}
	l.facts = append(l.facts, prompt.Fact{Source: source, Text: text, Data: kept, Priority: prio})
}

// site is the site field of a row for an unbound reader.
func (l *list) site(s string) prompt.Field {
	if !l.unbound {
		return prompt.Field{}
	}
	return val("site", s)
}

// host registers a host name (so it is pseudonymised in any free text)
// and returns the field marking the value as one.
func (l *list) host(name, value string) prompt.Field {
	l.addHosts(value)
	return prompt.Field{Name: name, Value: value, Mark: prompt.KindHost}
}

// addHosts registers host names; addresses are left to the prompt
// layer, which gives them ip tokens (registered as names they would get
// host tokens, and the same address two different tokens).
func (l *list) addHosts(names ...string) {
	for _, n := range names {
		if _, err := netip.ParseAddr(n); err != nil && n != "" {
			l.ps.AddHost(n)
		}
	}
}

// user registers a user name and returns its field.
func (l *list) user(name, value string) prompt.Field {
	l.ps.AddUser(value)
	return prompt.Field{Name: name, Value: value, Mark: prompt.KindUser}
}

func val(name, value string) prompt.Field { return prompt.Field{Name: name, Value: value} }

// prio is the priority of row rank (0-based) of a list starting at top:
// two steps per row, so the lists interleave (a list's first rows outrank
// another's last).
func prio(top, rank int) int { return top - 2*rank }

// bytesText is a byte count in SI units with three significant digits.
func bytesText(v float64) string { return si(v, "B") }

// bitsText is a rate in bits per second.
func bitsText(v float64) string { return si(v, "bit/s") }

func si(v float64, unit string) string {
	units := []string{"", "k", "M", "G", "T", "P"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64) + " " + unit
	}
	prec := 2
	switch {
	case math.Abs(v) >= 100:
		prec = 0
	case math.Abs(v) >= 10:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " " + units[i] + unit
}

// pct is a percentage with one decimal.
func pct(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }

// change is cur against base as a signed percentage, or why there is none.
func change(cur, base float64, days int) string {
	if days == 0 {
		return "no baseline (no data in the same hour of the previous 7 days)"
	}
	if base <= 0 {
		return fmt.Sprintf("baseline 0 B (mean of the same hour on %d of the previous 7 days)", days)
	}
	d := (cur - base) / base * 100
	sign := "+"
	if d < 0 {
		sign = ""
	}
	return fmt.Sprintf("%s%.0f%% against the baseline of %s (mean of the same hour on %d of the previous 7 days)", sign, d, bytesText(base), days)
}

// ts is a time for the model: UTC, to the minute.
func ts(unix int64) string {
	if unix <= 0 {
		return "never"
	}
	return time.Unix(unix, 0).UTC().Format("2006-01-02 15:04 UTC")
}

// word keeps an enumeration netmon writes itself (alert kinds, states) in
// template text; anything else is reported as "other" (the value is then
// in the data).
func word(s string) string {
	if s == "" || len(s) > 32 {
		return "other"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "other"
		}
	}
	return s
}

// optPct is a nullable percentage.
func optPct(p *float64) string {
	if p == nil {
		return "unknown"
	}
	return pct(*p)
}
