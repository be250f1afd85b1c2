package threat

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Categories maps domains to the category the operator gave them in
// -domain-category-file; a name takes its nearest listed parent's.
type Categories struct {
	Path  string
	Stats Stats
	names map[string]category
}

type category struct {
	name string
	line uint32
}

// LoadCategories reads a category file: one "domain category" per line
// (space, tab or comma between them; "#" comments). A line without both
// is junk, counted and skipped.
func LoadCategories(path string) (*Categories, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open domain category file %q: %w", path, err)
	}
	defer f.Close()
	c, err := ParseCategories(f)
	if err != nil {
		return nil, fmt.Errorf("read domain category file %q: %w", path, err)
	}
	c.Path = path
	return c, nil
}

// ParseCategories reads the category format of LoadCategories.
func ParseCategories(r io.Reader) (*Categories, error) {
	c := &Categories{names: map[string]category{}}
	interned := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for line := 1; sc.Scan(); line++ {
		c.Stats.Lines++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if s[0] == '#' {
			c.Stats.Comments++
			continue
		}
		f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		name, ok := "", false
		if len(f) >= 2 {
			name, ok = normalise(f[0])
		}
		if !ok {
			c.Stats.Junk++
			continue
		}
		cat := strings.Join(f[1:], " ")
		if v, ok := interned[cat]; ok {
			cat = v
		} else {
			interned[cat] = cat
		}
		if _, dup := c.names[name]; !dup {
			c.names[name] = category{cat, uint32(line)}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	c.Stats.Domains = len(c.names)
	return c, nil
}

// Category returns the category of name or of its nearest listed parent.
func (c *Categories) Category(name string) (string, bool) {
	cat, _, ok := c.Lookup(name)
	return cat, ok
}

// Lookup is Category with the entry (the listed name and its line) that
// decided.
func (c *Categories) Lookup(name string) (string, Hit, bool) {
	if c == nil {
		return "", Hit{}, false
	}
	n, ok := normalise(name)
	if !ok {
		return "", Hit{}, false
	}
	for {
		if v, ok := c.names[n]; ok {
			return v.name, Hit{Entry: n, List: c.Path, Line: int(v.line)}, true
		}
		i := strings.IndexByte(n, '.')
		if i < 0 {
			return "", Hit{}, false
		}
		n = n[i+1:]
		if strings.IndexByte(n, '.') < 0 {
			return "", Hit{}, false
		}
	}
}
