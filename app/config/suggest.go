package config

import "strings"

// DidYouMean returns `; did you mean "x"?` for the known name closest to
// name (by edit distance, at most a third of its length and at least 2),
// or "" when none is close. The CLI uses it for mistyped flags too.
func DidYouMean(name string, known []string) string {
	best, bestD := "", len(name)/3+1
	bestD = max(bestD, 2)
	for _, k := range known {
		if d := distance(strings.ToLower(name), strings.ToLower(k)); d <= bestD && (best == "" || d < distance(name, best)) {
			best = k
		}
	}
	if best == "" || best == name {
		return ""
	}
	return `; did you mean "` + best + `"?`
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
