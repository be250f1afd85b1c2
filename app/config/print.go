package config

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Print writes settings as a table: the key as the YAML file spells it,
// the effective value (secrets as <redacted>), where the value came from
// (flag, env, file, default) and the component field it sets.
func Print(w io.Writer, settings []Setting) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tSOURCE\tFIELD")
	for _, s := range settings {
		val := s.Value
		if val == "" {
			val = `""`
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Key, val, s.Source, s.Field)
	}
	return tw.Flush()
}
