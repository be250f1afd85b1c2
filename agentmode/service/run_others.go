//go:build !windows

package service

import "context"

// Run runs the agent. systemd and launchd stop a service with SIGTERM,
// which already cancels ctx (signal.NotifyContext in app/cli), so the
// agent runs the same way in the foreground and under the manager.
func Run(ctx context.Context, _ string, run func(context.Context) error) error {
	return run(ctx)
}
