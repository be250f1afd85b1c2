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
		if long[name] {
			out[i] = "-" + a
		}
	}
	return out
}
