package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NormalizeArgs rewrites the spec's single-dash long flags (-port 8080,
// -db=x) to the double-dash form pflag understands (--port 8080, --db=x).
// Only names declared as long flags somewhere in the command tree are
// rewritten, so one-letter shorthands (-h), negative numbers used as values
// (-retention-hours is a flag, -1 is not) and positional arguments pass
// through unchanged. Nothing after a bare "--" is touched.
func NormalizeArgs(root *cobra.Command, args []string) []string {
	long := map[string]bool{"help": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) { long[f.Name] = true }
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	out := make([]string, len(args))
	copy(out, args)
	for i, a := range out {
		if a == "--" {
			break
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			continue
		}
		name := a[1:]
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			name = name[:eq]
		}
		// A declared long flag, or one that looks like a long flag and is
		// not one (-retention-hour): rewritten too, so that pflag reports
		// it as an unknown flag (with a suggestion) rather than as an
		// unknown shorthand 'r'.
		if long[name] || looksLong(name) {
			out[i] = "-" + a
		}
	}
	return out
}

// looksLong reports whether a single-dash word is meant as a long flag:
// letters, digits and dashes, starting with a letter, with a dash inside
// or at least four characters (shorthand groups such as -hv stay).
func looksLong(name string) bool {
	if len(name) < 2 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-') {
			return false
		}
	}
	return strings.Contains(name, "-") || len(name) >= 4
}
