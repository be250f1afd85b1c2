package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"netmon/agentmode"
	"netmon/app/config"
	"netmon/app/logging"
)

func newAgentCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the agent: enroll with a hub and send interface counters and connections",
		Long: `Run the agent in the foreground. It enrolls with the hub at -hub-url using the
enroll token (-hub-token), then sends a telemetry batch every interval the hub
asks for (30 s by default): interface counters and the connection inventory.

Settings come from flags, then NETMON_* environment variables, then the YAML
file of -config, then defaults. Nested YAML keys map to variables with a
double underscore: hub.url is NETMON_HUB__URL, hub.token NETMON_HUB__TOKEN,
collect.method NETMON_COLLECT__METHOD. Example file:

  hub:
    url: https://netmon.example:8080
    token: ent_...          # enroll token; keep the file mode 0600
    ca: /etc/netmon/hub-ca.pem   # optional: pin this CA instead of trust on first use
  name: web-01
  site: paris
  state: /var/lib/netmon/netmon-agent.state.json
  collect:
    method: auto

State: the state file (default netmon-agent.state.json in ` + agentmode.DefaultServiceStateDir() + ` as
root, in $XDG_STATE_HOME/netmon, else ~/.local/state/netmon, as another user;
an installed service uses ` + agentmode.DefaultServiceStateDir() + `) holds the agent
id and token, a random machine id, the pinned hub CA and counters, mode 0600.
Beside it: <state>.crt, <state>.key (client certificate and key), <state>.ca
(hub CA) and <state>.queue.jsonl (up to 100 batches kept while the hub is
unreachable, sent oldest first on reconnect). Once enrolled, the agent starts
without a token, but it can then not re-enroll if the hub forgets it.

TLS: with an https hub and no -hub-ca, the first connection trusts the hub's
certificate, pins the CA the hub returns and from then on accepts only that CA;
a hub with another CA is refused and nothing is sent.

SIGINT or SIGTERM stops it; batches not yet sent are kept in the queue.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.LoadAgent(cmd.Flags(), agentmode.Enrolled)
			if err != nil {
				return usageError{err}
			}
			log, err := logging.New(cmd.ErrOrStderr(), cfg.LogFormat, cfg.LogLevel)
			if err != nil {
				return usageError{err}
			}
			log = log.With("component", "agent")
			for _, d := range cfg.Deprecated {
				log.Warn("deprecated setting ignored", "setting", d, "instead", "collect.method (-collect-method)")
			}
			a := agentmode.New(log, cfg.Agent)
			return agentmode.RunService(cmd.Context(), a.Run)
		},
	}
	config.AddAgentFlags(cmd.Flags())
	cmd.AddCommand(newAgentInstallCmd())
	for _, action := range []struct{ name, short string }{
		{"uninstall", "Stop and remove the agent service (the state directory is kept)"},
		{"start", "Start the installed agent service"},
		{"stop", "Stop the agent service"},
		{"restart", "Restart the agent service"},
		{"status", "Print whether the agent service is installed and running"},
	} {
		cmd.AddCommand(newAgentControlCmd(action.name, action.short))
	}
	return cmd
}

// serviceSkip are the flags install does not copy into the service's
// command line: it sets state and config itself, and an enroll token
// there would be readable by every local user.
var serviceSkip = map[string]bool{"state": true, "config": true, "dry-run": true, "hub-token": true, "enroll-token": true, "help": true}

// servicePathFlags name files: made absolute, the service runs elsewhere.
var servicePathFlags = map[string]bool{"hub-ca": true}

func newAgentInstallCmd() *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Register the agent as a system service (systemd, launchd, Windows service)",
		Long: `Register the agent with the host's service manager, with the same settings
flags as 'netmon agent'. The service runs 'netmon agent' with -state (default
` + filepath.Join(agentmode.DefaultServiceStateDir(), agentmode.DefaultStateFile) + `), -config made absolute, and the other
flags given here. Environment variables are not passed to the service.

The enroll token is not accepted as a flag here (the service definition is
readable by every local user): put hub.token in the -config file (mode 0600),
or run 'netmon agent' once in the foreground with the same -state to enroll.

On systemd the unit is hardened: only CAP_NET_RAW and CAP_NET_ADMIN,
NoNewPrivileges, ProtectSystem=strict with the state directory as the only
writable path, ProtectHome, PrivateTmp, Restart=on-failure after 5 s.
--dry-run prints the unit (or the command line elsewhere) without installing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := serviceConfig(cmd.Flags())
			if err != nil {
				return err
			}
			var paths []string
			for i, a := range sc.Arguments {
				if i > 0 && (sc.Arguments[i-1] == "--state" || sc.Arguments[i-1] == "--config") {
					paths = append(paths, a)
				} else if p, ok := strings.CutPrefix(a, "--hub-ca="); ok {
					paths = append(paths, p)
				}
			}
			for _, p := range agentmode.ServiceUnreachable(paths) {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: the service will not see %s (home directories and /tmp are hidden from it): move it, e.g. under /etc/netmon\n", p)
			}
			out := cmd.OutOrStdout()
			if dryRun {
				if unit, err := agentmode.ServiceUnit(sc); err == nil {
					fmt.Fprint(out, unit)
				} else {
					fmt.Fprintf(out, "service %s: %s %s\n", agentmode.ServiceName, sc.Executable, strings.Join(sc.Arguments, " "))
				}
				return nil
			}
			msg, err := agentmode.ServiceControl(sc, "install")
			if err != nil {
				return err
			}
			fmt.Fprintln(out, msg)
			return nil
		},
	}
	config.AddAgentFlags(cmd.Flags())
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the service definition instead of installing it")
	// install refuses the enroll token as a flag and ignores the
	// deprecated -pcap: --help lists only what it takes (given anyway,
	// the token flags get their explanation).
	for _, name := range []string{"hub-token", "enroll-token", "pcap"} {
		_ = cmd.Flags().MarkHidden(name)
	}
	return cmd
}

// serviceConfig turns install's flags into the service definition, after
// checking them as the agent will.
func serviceConfig(fs *pflag.FlagSet) (agentmode.ServiceConfig, error) {
	if fs.Changed("hub-token") || fs.Changed("enroll-token") {
		return agentmode.ServiceConfig{}, usageError{errors.New("install does not take the enroll token as a flag (the service definition is readable by every local user): put hub.token in the -config file (mode 0600), or enroll once in the foreground with the same -state")}
	}
	// The token check needs the service's state path, known only after
	// loading: defer it.
	cfg, err := config.LoadAgent(fs, func(string) (bool, error) { return true, nil })
	if err != nil {
		return agentmode.ServiceConfig{}, usageError{err}
	}
	statePath := filepath.Join(agentmode.DefaultServiceStateDir(), agentmode.DefaultStateFile)
	if fs.Changed("state") || cfg.Agent.StatePath != config.DefaultAgentState() {
		if statePath, err = filepath.Abs(cfg.Agent.StatePath); err != nil {
			return agentmode.ServiceConfig{}, fmt.Errorf("state: %w", err)
		}
	}
	if cfg.Agent.EnrollToken == "" {
		ok, err := agentmode.Enrolled(statePath)
		if err != nil {
			return agentmode.ServiceConfig{}, err
		}
		if !ok {
			return agentmode.ServiceConfig{}, usageError{fmt.Errorf("no enroll token: put hub.token in the -config file, or enroll once in the foreground with -state %s", statePath)}
		}
	}
	args := []string{"agent", "--state", statePath}
	if cfg.File != "" {
		abs, err := filepath.Abs(cfg.File)
		if err != nil {
			return agentmode.ServiceConfig{}, fmt.Errorf("config: %w", err)
		}
		args = append(args, "--config", abs)
	}
	var flags []string
	fs.Visit(func(f *pflag.Flag) {
		if !serviceSkip[f.Name] {
			flags = append(flags, f.Name)
		}
	})
	sort.Strings(flags)
	for _, name := range flags {
		val := fs.Lookup(name).Value.String()
		if servicePathFlags[name] {
			if abs, err := filepath.Abs(val); err == nil {
				val = abs
			}
		}
		args = append(args, "--"+name+"="+val)
	}
	exe, err := os.Executable()
	if err != nil {
		return agentmode.ServiceConfig{}, fmt.Errorf("locate the netmon binary: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return agentmode.ServiceConfig{
		Description: "netmon agent: sends interface counters and connections to " + cfg.Agent.HubURL,
		Executable:  exe,
		Arguments:   args,
		StateDir:    filepath.Dir(statePath),
	}, nil
}

func newAgentControlCmd(action, short string) *cobra.Command {
	return &cobra.Command{
		Use:   action,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			msg, err := agentmode.ServiceControl(agentmode.ServiceConfig{}, action)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), msg)
			return nil
		},
	}
}
