package ui

import (
	"strconv"
	"strings"
)

// encodings are the precompressed variants the build writes, best first:
// brotli is about 15% smaller than gzip on the console's scripts.
var encodings = []struct{ name, ext string }{
	{"br", ".br"},
	{"gzip", ".gz"},
}

// negotiate picks the content coding for a response from the request's
// Accept-Encoding (RFC 9110 section 12.5.3): the acceptable coding with the
// highest q-value among those that have a variant (has reports whether the
// variant with that extension exists), brotli before gzip on a tie. q=0
// refuses a coding; "*" stands for every coding not named; "x-gzip" is
// gzip. It returns "" when the identity encoding should be served.
func negotiate(accept string, has func(ext string) bool) (coding, ext string) {
	if accept == "" {
		return "", ""
	}
	q := map[string]float64{}
	star := -1.0
	for _, part := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "x-gzip" {
			name = "gzip"
		}
		v := 1.0
		for _, p := range strings.Split(params, ";") {
			k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0 // a malformed weight accepts nothing rather than guessing
				}
				v = f
			}
		}
		if name == "*" {
			star = v
			continue
		}
		if old, seen := q[name]; !seen || v > old {
			q[name] = v
		}
	}
	best := 0.0
	for _, e := range encodings {
		v, named := q[e.name]
		if !named {
			v = max(star, 0)
		}
		if v > best && has(e.ext) {
			best, coding, ext = v, e.name, e.ext
		}
	}
	return coding, ext
}
