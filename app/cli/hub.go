package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"netmon/app/config"
	"netmon/app/hub"
	"netmon/app/logging"
)

func newHubCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Run the hub: REST API, web console and database maintenance",
		Long: `Run the hub. It serves the REST API, /healthz, /readyz, /metrics and the web
console on -port, backed by a SQLite file (default netmon.db) or PostgreSQL
(a postgres:// DSN in -db). Migrations apply at start.

Configuration comes from flags, then NETMON_* environment variables, then the
YAML file of -config, then defaults. NETMON_DB_MAX_CONNS (default 32) sizes
the database read pool.

SIGINT or SIGTERM stops it gracefully: no new connections, in-flight
requests get up to 10 seconds, then the database is closed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.LoadHub(cmd.Flags())
			if err != nil {
				return usageError{err}
			}
			if err := cfg.ResolvePaths(); err != nil {
				return usageError{err}
			}
			log, err := logging.New(cmd.ErrOrStderr(), cfg.Server.LogFormat, cfg.Server.LogLevel)
			if err != nil {
				return usageError{err}
			}
			h, err := hub.New(cmd.Context(), log, cfg)
			if err != nil {
				return err
			}
			return runHub(cmd.Context(), h, cmd.ErrOrStderr())
		},
	}
	config.AddHubFlags(cmd.Flags())
	return cmd
}

// runHub starts h and blocks until ctx is cancelled (a signal) or serving
// fails, then stops it.
func runHub(ctx context.Context, h *hub.Hub, banner io.Writer) error {
	if err := h.Start(ctx); err != nil {
		return err
	}
	// One banner for the person at the terminal, after the start-up log.
	_, _ = io.WriteString(banner, "\n"+h.Banner(ctx)+"\n")
	var serveErr error
	select {
	case <-ctx.Done():
		h.Log().Info("signal received, stopping", "drain_timeout", hub.DrainTimeout.String())
	case err, ok := <-h.Errors():
		if ok {
			serveErr = fmt.Errorf("http server: %w", err)
		}
	}
	// The signal's context is done; the drain gets its own deadline.
	if err := h.Stop(context.Background()); err != nil && serveErr == nil {
		return err
	}
	return serveErr
}
