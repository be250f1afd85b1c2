package cli

import (
	"github.com/spf13/cobra"

	"netmon/app/config"
)

// newConfigCmd is `netmon config`: what the configuration is.
func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration of the hub or the agent",
		Args:  cobra.NoArgs,
	}
	printCmd := &cobra.Command{
		Use:   "print",
		Short: "Print the hub's effective configuration (same flags as 'netmon hub'); 'print agent' for the agent's",
		Long: `Print the effective configuration: every setting with its value, where the
value came from (flag, env, file or default) and the component field it sets.
It takes the same flags, NETMON_* variables and -config file as the command it
describes: 'netmon config print [hub] <hub flags>' or 'netmon config print agent
<agent flags>'. Secrets (passwords, tokens, the OIDC client secret, a DSN's
password) are shown as <redacted> when set. The configuration is validated as
the command would.`,
		Args: cobra.NoArgs,
		RunE: printHub,
	}
	config.AddHubFlags(printCmd.Flags())
	hub := &cobra.Command{
		Use:   "hub",
		Short: "Print the hub's effective configuration (same flags as 'netmon hub')",
		Args:  cobra.NoArgs,
		RunE:  printHub,
	}
	config.AddHubFlags(hub.Flags())
	agent := &cobra.Command{
		Use:   "agent",
		Short: "Print the agent's effective configuration (same flags as 'netmon agent')",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// An agent without a token may still be enrolled: printing
			// does not need the state file's answer.
			_, settings, err := config.LoadAgentSettings(cmd.Flags(), func(string) (bool, error) { return true, nil })
			if err != nil {
				return usageError{err}
			}
			return config.Print(cmd.OutOrStdout(), settings)
		},
	}
	config.AddAgentFlags(agent.Flags())
	printCmd.AddCommand(hub, agent)
	cmd.AddCommand(printCmd)
	return cmd
}

func printHub(cmd *cobra.Command, _ []string) error {
	_, settings, err := config.LoadHubSettings(cmd.Flags())
	if err != nil {
		return usageError{err}
	}
	return config.Print(cmd.OutOrStdout(), settings)
}
