// Package threat holds the hub's domain lists: the threat list of
// -ioc-file (spec 6.3 rule ioc, GET /api/v1/threatintel) and the domain
// categories of -domain-category-file (GET /api/v1/enrich). Both are
// lookups loaded from files the operator keeps, reloaded when a file's
// mtime changes, like the GeoIP databases beside them: they live under
// collectors/geo (STYLE.md puts threat lists there), not under alerting,
// because the API's enrichment and reputation routes read them as much as
// the ioc rule does. It imports no service: the alert engine and the API
// declare the small interfaces they need, and Lists implements the ioc
// rule's matcher in store/record's types.
//
// A list is one string holding every listed name back to back and a map
// from each name (a substring of it, so no allocation per name) to its
// line: a million domains take about 60 MB and a lookup with its parent
// walk is a handful of map probes (bench_test.go).
package threat

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// List is a loaded threat list: domains (matched with their parents) and
// addresses, each with the line of the file that listed it.
type List struct {
	// Path is the file the list came from.
	Path string
	// Stats counts what the file held.
	Stats Stats

	names map[string]uint32 // name -> line
	ips   map[netip.Addr]uint32
}

// Stats counts the lines of a list file by what they were.
type Stats struct {
	Lines    int `json:"lines"`
	Domains  int `json:"domains"`
	IPs      int `json:"ips"`
	Comments int `json:"comments"`
	// Junk counts lines that are neither an entry nor a comment (an
	// ad-block rule with a path or wildcard, an exception, a word without
	// a dot); they are skipped, never fatal.
	Junk int `json:"junk"`
	// PublicSuffixes counts entries that are themselves public suffixes
	// (co.uk, github.io): skipped, since parent matching would mark every
	// name under them.
	PublicSuffixes int `json:"public_suffixes"`
}

// Hit is the entry that decided a match.
type Hit struct {
	// Entry is the listed name (the queried name or one of its parents)
	// or address.
	Entry string `json:"entry"`
	// List is the file; Line its 1-based line.
	List string `json:"list"`
	Line int    `json:"line"`
}

// hostsSinks are the names hosts files map to themselves; they are not
// threats.
var hostsSinks = map[string]bool{"localhost": true, "localhost.localdomain": true, "local": true,
	"broadcasthost": true, "ip6-localhost": true, "ip6-loopback": true, "ip6-localnet": true,
	"ip6-mcastprefix": true, "ip6-allnodes": true, "ip6-allrouters": true, "ip6-allhosts": true, "0.0.0.0": true}

// LoadList reads a threat list file.
func LoadList(path string) (*List, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open threat list %q: %w", path, err)
	}
	defer f.Close()
	l, err := ParseList(f)
	if err != nil {
		return nil, fmt.Errorf("read threat list %q: %w", path, err)
	}
	l.Path = path
	return l, nil
}

// span is a name's place in the blob while a file is parsed.
type span struct{ off, n, line uint32 }

// ParseList reads a list in any mix of three formats, line by line:
// hosts files ("0.0.0.0 evil.test other.test"), ad-block rules
// ("||evil.test^", options after $ ignored) and plain text (one domain or
// address per line). "#" and "!" start comments, "[" an ad-block header.
func ParseList(r io.Reader) (*List, error) {
	var blob strings.Builder
	var spans []span
	l := &List{ips: map[netip.Addr]uint32{}}
	addName := func(name string, line int) bool {
		name, ok := normalise(name)
		if !ok {
			return false
		}
		if isPublicSuffix(name) {
			l.Stats.PublicSuffixes++
			return true // a well-formed line, refused on purpose: not junk
		}
		spans = append(spans, span{uint32(blob.Len()), uint32(len(name)), uint32(line)})
		blob.WriteString(name)
		return true
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		raw, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line over 64 KiB is junk; skip the rest of it.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			l.Stats.Lines++
			l.Stats.Junk++
			if err == io.EOF {
				break
			}
			continue
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(raw) > 0 {
			l.Stats.Lines++
			l.parseLine(strings.TrimSpace(string(raw)), line, addName)
		}
		if err == io.EOF {
			break
		}
	}
	// An exact-size copy: the builder's doubling may leave up to half
	// its capacity unused, which a million names would keep for good.
	s := strings.Clone(blob.String())
	blob.Reset()
	l.names = make(map[string]uint32, len(spans))
	for _, sp := range spans {
		name := s[sp.off : sp.off+sp.n]
		if _, dup := l.names[name]; !dup {
			l.names[name] = sp.line
		}
	}
	l.Stats.Domains = len(l.names)
	l.Stats.IPs = len(l.ips)
	return l, nil
}

func (l *List) parseLine(s string, line int, addName func(string, int) bool) {
	switch {
	case s == "":
		return
	case s[0] == '#' || s[0] == '!' || s[0] == '[':
		l.Stats.Comments++
		return
	}
	if i := strings.IndexByte(s, '#'); i > 0 {
		s = strings.TrimSpace(s[:i])
	}
	if rest, ok := strings.CutPrefix(s, "||"); ok {
		if i := strings.IndexByte(rest, '$'); i >= 0 {
			rest = rest[:i]
		}
		name, ok := strings.CutSuffix(rest, "^")
		if !ok || !addName(name, line) {
			l.Stats.Junk++
		}
		return
	}
	fields := strings.Fields(s)
	if a, err := netip.ParseAddr(fields[0]); err == nil {
		if len(fields) == 1 {
			if _, dup := l.ips[a.Unmap()]; !dup {
				l.ips[a.Unmap()] = uint32(line)
			}
			return
		}
		// A hosts line: every name after the address is listed.
		added := false
		for _, f := range fields[1:] {
			if hostsSinks[strings.ToLower(f)] {
				added = true // a sink is a valid hosts line, not junk
				continue
			}
			if addName(f, line) {
				added = true
			}
		}
		if !added {
			l.Stats.Junk++
		}
		return
	}
	if len(fields) != 1 || !addName(fields[0], line) {
		l.Stats.Junk++
	}
}

// normalise lowercases a domain and drops a trailing dot; ok is false for
// what is not a domain of at least two labels (a lone label listed would
// match a whole top-level domain).
func normalise(name string) (string, bool) {
	name = strings.TrimSuffix(name, ".")
	if len(name) == 0 || len(name) > 253 || strings.IndexByte(name, '.') <= 0 || name[len(name)-1] == '.' {
		return "", false
	}
	lower := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		case c == '.':
			if name[i-1] == '.' {
				return "", false
			}
		case c >= 'A' && c <= 'Z':
			lower = false
		default:
			return "", false
		}
	}
	if !lower {
		name = strings.ToLower(name)
	}
	return name, true
}

// isPublicSuffix reports whether name is itself a public suffix of the
// public suffix list (ICANN or private section: co.uk, github.io), under
// which unrelated parties register names.
func isPublicSuffix(name string) bool {
	ps, _ := publicsuffix.PublicSuffix(name)
	return ps == name
}

// Len is the number of listed domains.
func (l *List) Len() int { return len(l.names) }

// Match reports whether name or one of its parent domains is listed
// (a.b.evil.test matches evil.test). It does not allocate for a name
// already lowercase without a trailing dot.
func (l *List) Match(name string) (Hit, bool) {
	if l == nil {
		return Hit{}, false
	}
	n, ok := normalise(name)
	if !ok {
		return Hit{}, false
	}
	for {
		if line, ok := l.names[n]; ok {
			return Hit{Entry: n, List: l.Path, Line: int(line)}, true
		}
		i := strings.IndexByte(n, '.')
		if i < 0 {
			return Hit{}, false
		}
		n = n[i+1:]
		if strings.IndexByte(n, '.') < 0 {
			return Hit{}, false // a lone label is never listed
		}
	}
}

// MatchAddr reports whether an address is listed.
func (l *List) MatchAddr(a netip.Addr) (Hit, bool) {
	if l == nil {
		return Hit{}, false
	}
	line, ok := l.ips[a.Unmap()]
	if !ok {
		return Hit{}, false
	}
	return Hit{Entry: a.Unmap().String(), List: l.Path, Line: int(line)}, true
}
