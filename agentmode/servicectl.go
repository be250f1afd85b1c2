package agentmode

import (
	"context"

	"netmon/agentmode/service"
)

// ServiceName is the name the agent is registered under
// (netmon-agent.service on systemd).
const ServiceName = service.DefaultName

// ServiceConfig describes the service install registers.
type ServiceConfig = service.Config

// ServiceActions lists what ServiceControl accepts.
var ServiceActions = service.Actions

// ServiceUnit renders the hardened systemd unit install writes.
func ServiceUnit(c ServiceConfig) (string, error) { return service.Unit(c) }

// ServiceControl installs, removes, starts, stops or queries the service.
func ServiceControl(c ServiceConfig, action string) (string, error) {
	return service.Control(c, action)
}

// DefaultServiceStateDir is where an installed agent keeps its state
// when -state is not given (/var/lib/netmon on Linux).
func DefaultServiceStateDir() string { return service.DefaultStateDir() }

// RunService runs run as the agent process: directly from a console, and
// answering the service manager's protocol when started by one (Windows).
func RunService(ctx context.Context, run func(context.Context) error) error {
	return service.Run(ctx, ServiceName, run)
}

// ServiceUnreachable returns those of paths the installed service could
// not read (the systemd unit hides home directories and /tmp).
func ServiceUnreachable(paths []string) []string { return service.Unreachable(paths) }
