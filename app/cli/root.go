// Package cli is the netmon command line: the cobra root and its
// subcommands (`hub`, `agent`, `admin`, `config print`, `version`). Commands are built by constructors with no package-level
// state, and every spec-style single-dash long flag (-port 8080) is
// rewritten to its double-dash form before cobra parses (normalize.go).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"netmon/app/config"
	"netmon/app/version"
)

// Execute runs the command line with the process's arguments and returns
// the exit code. SIGINT and SIGTERM cancel the command's context, which is
// how `netmon hub` shuts down gracefully.
func Execute() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Run executes args (without the program name) and returns the exit code:
// 0 on success, 2 for usage errors, 1 for failures, or a command's own
// code (exitError: `compliance verify` exits 3 on an unsealed tail).
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewRoot(stdout, stderr)
	root.SetIn(stdin)
	root.SetArgs(NormalizeArgs(root, args))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "netmon:", err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// usageError marks errors in the command line itself (exit code 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// exitError is a failure with its own exit code, for a command whose
// outcome has more than two answers.
type exitError struct {
	code int
	error
}

func (e exitError) Unwrap() error { return e.error }

// NewRoot builds the command tree.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "netmon",
		Short: "netmon: network traffic monitoring hub and agent",
		Long: `netmon monitors network traffic: a hub with a REST API, a live WebSocket feed,
a web console and collectors, backed by SQLite (default) or PostgreSQL.

Long flags take one dash or two: -port 8080 and --port 8080 are the same.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{suggestFlag(c, err)} })
	// netmon --version prints what `netmon version` prints.
	root.Version = version.Version
	root.SetVersionTemplate(version.String() + "\n")
	// netmon completion bash|zsh|fish|powershell (cobra's generator).
	root.CompletionOptions.HiddenDefaultCmd = false
	root.AddCommand(newHubCmd(), newAdminCmd(), newConfigCmd(), newVersionCmd())
	root.AddCommand(newAgentCmd())
	root.AddCommand(newComplianceCmd())
	root.AddCommand(newDocsCmd())
	return root
}

// suggestFlag adds the closest flag of c to an "unknown flag" error:
// `unknown flag: --retention-hour; did you mean "--retention-hours"?`.
func suggestFlag(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var known []string
	c.Flags().VisitAll(func(f *pflag.Flag) { known = append(known, "--"+f.Name) })
	if hint := config.DidYouMean("--"+name, known); hint != "" {
		return fmt.Errorf("%w%s", err, hint)
	}
	return err
}
