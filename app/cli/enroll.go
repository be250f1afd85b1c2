package cli

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"netmon/app/audit"
	"netmon/app/config"
	"netmon/app/fleet/enroll"
	"netmon/store/vault"
)

// newEnrollTokenCmd is `netmon admin enroll-token`: agent enroll tokens
// made directly in the database, e.g. by provisioning scripts.
func newEnrollTokenCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "enroll-token", Short: "Create and list agent enroll tokens; rotate the hub's generated static token"}
	cmd.AddCommand(newEnrollTokenCreateCmd(), newEnrollTokenListCmd(), newRotateStaticCmd())
	return cmd
}

func newRotateStaticCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rotate-static",
		Short: "Replace the static enroll token the hub generated (kept sealed in its database) and print the new one",
		Long: `Replace the static enroll token the hub generated when no -enroll-token
was set. The hub keeps it sealed in its database (with the vault key:
give the hub's --vault-key-file or --vault-key-source) so that it survives
restarts; this makes a new one, records the rotation in the audit chain
and prints the token once. A running hub takes it at its next start.
A token set with -enroll-token is not affected.`,
		Args: cobra.NoArgs,
		RunE: withAdmin(nil, func(cmd *cobra.Command, _ []string, env *adminEnv) error {
			cfg, err := config.LoadAdmin(cmd.Flags())
			if err != nil {
				return usageError{err}
			}
			if cfg.Vault.Source != vault.SourceEnv {
				// LoadKey would make a new key: that is the hub's business.
				if _, err := os.Stat(cfg.Vault.File); err != nil {
					return usageError{fmt.Errorf("vault key file %s: %w; give the hub's --vault-key-file", cfg.Vault.File, err)}
				}
			}
			key, _, err := vault.LoadKey(cfg.Vault, os.Getenv)
			if err != nil {
				return fmt.Errorf("vault key: %w", err)
			}
			v, err := vault.New(key)
			if err != nil {
				return err
			}
			if _, err := vault.CheckKey(env.ctx, env.db, v); err != nil {
				return fmt.Errorf("vault key: %w", err)
			}
			tok, err := enroll.RotateStaticToken(env.ctx, env.db, v, audit.Builder{}, actorOf(env))
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok)
			fmt.Fprintln(cmd.ErrOrStderr(), "new static enroll token printed once; restart the hub to use it")
			return nil
		}),
	}
}

// enrollOf is the enrollment service for the token commands: they manage
// tokens only, so no throttle, CA or intake (those serve the hello).
func enrollOf(env *adminEnv) *enroll.Service {
	return enroll.New(slog.New(slog.DiscardHandler), enroll.Config{MultiSite: env.auth.MultiSite()}, env.db, audit.Builder{}, nil, nil, nil)
}

// actorOf is the operator running the command, for the audit chain.
func actorOf(env *adminEnv) audit.Actor {
	return audit.Actor{Username: env.actor.Username, Role: string(env.actor.Role), ActorType: string(env.actor.Actor)}
}

func newEnrollTokenCreateCmd() *cobra.Command {
	var name, site, output string
	var days, uses int
	var cidrs []string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an enroll token (ent_…); it is printed once, only its hash is stored",
		Args:  cobra.NoArgs,
		RunE: withAdmin(&output, func(cmd *cobra.Command, _ []string, env *adminEnv) error {
			tok, err := enrollOf(env).CreateEnrollToken(env.ctx, actorOf(env), "", enroll.EnrollTokenCreate{Name: name, Site: site, ExpiresInDays: &days, MaxUses: &uses, AllowedCIDRs: cidrs})
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), tok)
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok.Token)
			exp := "never"
			if tok.Item.ExpiresAt != 0 {
				exp = time.Unix(tok.Item.ExpiresAt, 0).Format(time.RFC3339)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "enroll token %q (id %d%s, expires %s, max uses %d): shown once, store it now\n", tok.Item.Name, tok.ID, siteSuffix(tok.Item.Site), exp, tok.Item.MaxUses)
			return nil
		}),
	}
	cmd.Flags().StringVar(&name, "name", "", "token name (required)")
	cmd.Flags().StringVar(&site, "site", "", "site of the agents it enrolls (required with -multi-site)")
	cmd.Flags().IntVar(&days, "expires-in-days", 0, "days until it expires: 0 = 1 day, -1 = never")
	cmd.Flags().IntVar(&uses, "max-uses", 1, "enrollments it allows; 0 = unlimited")
	cmd.Flags().StringSliceVar(&cidrs, "allowed-cidrs", nil, "source prefixes allowed to enroll with it, comma-separated (default any)")
	addOutputFlag(cmd, &output)
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func newEnrollTokenListCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List enroll tokens (never the secret)",
		Args:  cobra.NoArgs,
		RunE: withAdmin(&output, func(cmd *cobra.Command, _ []string, env *adminEnv) error {
			items, err := enrollOf(env).ListEnrollTokens(env.ctx, "")
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), items)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%-5s %-24s %-12s %-10s %-9s %s\n", "ID", "NAME", "SITE", "STATE", "USES", "ALLOWED")
			for _, it := range items {
				uses := fmt.Sprintf("%d/%d", it.Uses, it.MaxUses)
				if it.MaxUses == 0 {
					uses = fmt.Sprintf("%d/∞", it.Uses)
				}
				fmt.Fprintf(w, "%-5d %-24s %-12s %-10s %-9s %s\n", it.ID, it.Name, it.Site, it.State, uses, strings.Join(it.AllowedCIDRs, ","))
			}
			return nil
		}),
	}
	addOutputFlag(cmd, &output)
	return cmd
}
