package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"netmon/ui/docs"
)

// newDocsCmd prints the embedded manual for a machine with no browser: the
// same pages the hub serves at /docs/.
func newDocsCmd() *cobra.Command {
	var headings bool
	cmd := &cobra.Command{
		Use:   "docs [topic]",
		Short: "Print a page of the manual (the hub serves the same pages at /docs/)",
		Long: "Without a topic, list the manual's pages. With one, print that page as markdown.\n" +
			"A topic is a page's name (07-agents), its number (7), its topic word (agents)\n" +
			"or a word of its title (alerting).",
		Example: "  netmon docs\n  netmon docs quick-start\n  netmon docs 9 | less",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := docs.Load()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, p := range m.Pages() {
					fmt.Fprintf(tw, "%s\t%s\n", p.Slug, p.Title)
				}
				return tw.Flush()
			}
			p, err := m.Find(args[0])
			if err != nil {
				return usageError{err}
			}
			if headings {
				for _, h := range p.Headings {
					fmt.Fprintf(out, "%*s%s\n", 2*(h.Level-2), "", h.Text)
				}
				return nil
			}
			_, err = out.Write(p.Markdown())
			return err
		},
	}
	cmd.Flags().BoolVar(&headings, "headings", false, "print only the page's section headings")
	return cmd
}
