package alerting

import "netmon/store/record"

// silenced reports whether an active silence at now (Unix seconds)
// matches the alert's kind, site and key. A silence past its end stops
// matching by itself; one not yet started does not match either.
func silenced(list []record.AlertSilence, now int64, kind, site, key string) bool {
	for i := range list {
		s := &list[i]
		if now < s.Start || now >= s.End {
			continue
		}
		if glob(s.Kind, kind) && glob(s.Site, site) && glob(s.Key, key) {
			return true
		}
	}
	return false
}

// glob matches s against pattern, where `*` stands for any run of
// characters (none included) and every other character for itself. An
// empty pattern matches anything.
func glob(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	// The classic two-pointer match with backtracking to the last star:
	// linear in practice, no allocation.
	p, i, star, mark := 0, 0, -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
