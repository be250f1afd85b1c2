package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"netmon/app/audit"
	"netmon/app/auth"
	"netmon/app/config"
	"netmon/store"
)

// newAdminCmd is the admin group: it works directly on the hub's database
// (bootstrapping the first admin of a new install, or recovery), through
// the same rules and the same audit chain as the API.
func newAdminCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Administer users, API tokens and enroll tokens directly in the hub's database",
		Long: `Administer users and API tokens directly in the hub's database, for
bootstrapping the first admin of a new install or for recovery. The rules
are the API's (password at least 8 characters, valid roles, the last
enabled admin protected) and every change is written to the audit chain
as done by cli:<your login name>.

Passwords are read from the terminal (asked twice) or, when standard input
is not a terminal, from its first line — never from a flag.`,
	}
	config.AddAdminFlags(cmd.PersistentFlags())
	users := &cobra.Command{Use: "user", Short: "Create, list and reset users"}
	users.AddCommand(newUserCreateCmd(), newUserListCmd(), newUserPasswdCmd())
	tokens := &cobra.Command{Use: "token", Short: "Create API tokens"}
	tokens.AddCommand(newTokenCreateCmd())
	cmd.AddCommand(users, tokens, newEnrollTokenCmd())
	return cmd
}

// adminEnv is an open database with the auth service over it.
type adminEnv struct {
	db    *store.DB
	auth  *auth.Service
	actor *auth.Identity
	ctx   context.Context
}

func openAdmin(cmd *cobra.Command) (*adminEnv, func(), error) {
	cfg, err := config.LoadAdmin(cmd.Flags())
	if err != nil {
		return nil, nil, usageError{err}
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
	if dsn := cfg.Store.DSN; !strings.Contains(dsn, "://") {
		// A SQLite path: say which file, and never make a new empty
		// database from a typo.
		abs, _ := filepath.Abs(dsn)
		if _, err := os.Stat(dsn); errors.Is(err, os.ErrNotExist) {
			if create, _ := cmd.Flags().GetBool("create"); !create {
				cancel()
				return nil, nil, usageError{fmt.Errorf("database %s does not exist; give the hub's --db (or --config), or --create to make a new one", abs)}
			}
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "database: %s\n", abs)
	}
	db, err := store.Open(ctx, log.With("component", "store"), cfg.Store)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	svc, err := auth.New(log.With("component", "auth"), cfg.Auth, db, audit.Builder{}, nil)
	if err != nil {
		cancel()
		_ = db.Close()
		return nil, nil, err
	}
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	role := auth.RoleAdmin
	if cfg.Auth.MultiSite {
		role = auth.RoleGlobalAdmin
	}
	env := &adminEnv{db: db, auth: svc, ctx: audit.WithRequest(ctx, audit.Request{UserAgent: "netmon admin cli"}),
		actor: &auth.Identity{Username: "cli:" + name, Role: role, Actor: auth.ActorLegacy}}
	return env, func() { cancel(); _ = db.Close() }, nil
}

// withAdmin checks --output (when the command has one), opens the
// database for the command and closes it afterwards.
func withAdmin(output *string, fn func(cmd *cobra.Command, args []string, env *adminEnv) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if output != nil {
			if err := checkOutput(*output); err != nil {
				return err
			}
		}
		env, closeEnv, err := openAdmin(cmd)
		if err != nil {
			return err
		}
		defer closeEnv()
		return fn(cmd, args, env)
	}
}

func addOutputFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVarP(dst, "output", "o", "table", "output format: table or json")
}

func checkOutput(o string) error {
	if o != "table" && o != "json" {
		return usageError{fmt.Errorf("--output %q: want table or json", o)}
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// readPassword asks twice on a terminal, or reads stdin's first line.
func readPassword(cmd *cobra.Command, prompt string) (string, error) {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(cmd.ErrOrStderr(), prompt+": ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", err
		}
		fmt.Fprint(cmd.ErrOrStderr(), "again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", err
		}
		if string(a) != string(b) {
			return "", errors.New("the passwords differ")
		}
		return string(a), nil
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from stdin: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", errors.New("no password on standard input")
	}
	return pw, nil
}

func newUserCreateCmd() *cobra.Command {
	var name, role, site, output string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a user (the password is read from the terminal or stdin)",
		Example: `  netmon admin user create --username alice --role admin
  echo 'long-password' | netmon admin user create --username bot --role viewer --db postgres://...`,
		Args: cobra.NoArgs,
		RunE: withAdmin(&output, func(cmd *cobra.Command, _ []string, env *adminEnv) error {
			pw, err := readPassword(cmd, "password for "+name)
			if err != nil {
				return err
			}
			u, err := env.auth.CreateUser(env.ctx, env.actor, auth.UserCreate{Username: name, Password: pw, Role: role, Site: site})
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), u)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created user %s (id %d, role %s%s)\n", u.Username, u.ID, u.Role, siteSuffix(u.Site))
			return nil
		}),
	}
	cmd.Flags().StringVar(&name, "username", "", "user name (required)")
	cmd.Flags().StringVar(&role, "role", "admin", "role: admin, netops, auditor, analyst, viewer (multi-site: also site-admin, global-admin)")
	cmd.Flags().StringVar(&site, "site", "", "site the user is bound to (empty = all sites)")
	addOutputFlag(cmd, &output)
	_ = cmd.MarkFlagRequired("username")
	return cmd
}

func siteSuffix(site string) string {
	if site == "" {
		return ""
	}
	return ", site " + site
}

func newUserListCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List users",
		Args:  cobra.NoArgs,
		RunE: withAdmin(&output, func(cmd *cobra.Command, _ []string, env *adminEnv) error {
			users, err := env.auth.ListUsers(env.ctx, env.actor)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), users)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUSERNAME\tROLE\tSITE\tENABLED\tSSO")
			for _, u := range users {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%t\t%t\n", u.ID, u.Username, u.Role, u.Site, u.Enabled, u.SSO)
			}
			return tw.Flush()
		}),
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func newUserPasswdCmd() *cobra.Command {
	var enable bool
	cmd := &cobra.Command{
		Use:   "passwd USERNAME",
		Short: "Set a user's password (ends its sessions); --enable also re-enables it",
		Args:  cobra.ExactArgs(1),
		RunE: withAdmin(nil, func(cmd *cobra.Command, args []string, env *adminEnv) error {
			name, err := auth.NormalizeUsername(args[0])
			if err != nil {
				return err
			}
			u, err := env.db.GetUserByName(env.ctx, name)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no user %q", name)
			}
			if err != nil {
				return err
			}
			pw, err := readPassword(cmd, "new password for "+name)
			if err != nil {
				return err
			}
			up := auth.UserUpdate{Password: &pw}
			if enable {
				up.Enabled = &enable
			}
			if _, err := env.auth.UpdateUser(env.ctx, env.actor, u.ID, up); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "password of %s changed; its sessions ended\n", name)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&enable, "enable", false, "also enable the account (recovery of a disabled admin)")
	return cmd
}

func newTokenCreateCmd() *cobra.Command {
	var name, role, site, output string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an API token; it is printed once, only its hash is stored",
		Args:  cobra.NoArgs,
		RunE: withAdmin(&output, func(cmd *cobra.Command, _ []string, env *adminEnv) error {
			tok, err := env.auth.CreateToken(env.ctx, env.actor, auth.TokenCreate{Name: name, Role: role, Site: site})
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), tok)
			}
			fmt.Fprintln(cmd.OutOrStdout(), tok.Token)
			fmt.Fprintf(cmd.ErrOrStderr(), "token %q (id %d, role %s%s): shown once, store it now\n", tok.Name, tok.ID, tok.Role, siteSuffix(tok.Site))
			return nil
		}),
	}
	cmd.Flags().StringVar(&name, "name", "", "token name (required)")
	cmd.Flags().StringVar(&role, "role", "viewer", "role the token acts with")
	cmd.Flags().StringVar(&site, "site", "", "site the token is bound to (empty = all sites)")
	addOutputFlag(cmd, &output)
	_ = cmd.MarkFlagRequired("name")
	return cmd
}
