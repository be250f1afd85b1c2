package config

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Admin is the configuration of the admin commands, which work directly
// on the hub's database: the same keys, flags, variables and file as the
// hub for what they need.
type Admin struct {
	DB         string
	DBMaxConns int
	MultiSite  bool
	File       string
	// VaultKeyFile and VaultKeySource find the hub's vault key, for the
	// commands that seal a secret (rotate-static).
	VaultKeyFile   string
	VaultKeySource string
}

// AddAdminFlags declares the admin commands' persistent flags.
func AddAdminFlags(fs *pflag.FlagSet) {
	d := DefaultHubConfig()
	fs.String("db", d.Store.DSN, "the hub's database: SQLite file path or postgres:// DSN (env NETMON_DB)")
	fs.String("config", "", "the hub's YAML configuration file (env NETMON_CONFIG)")
	fs.Bool("multi-site", false, "the hub runs with -multi-site (allows the site-admin and global-admin roles) (env NETMON_MULTI_SITE)")
	fs.String("vault-key-file", d.Vault.File, "the hub's vault key file, for commands that seal a secret (env NETMON_VAULT_KEY_FILE)")
	fs.String("vault-key-source", d.Vault.Source, "file, or env (NETMON_VAULT_MASTER_KEY) (env NETMON_VAULT_KEY_SOURCE)")
	fs.Bool("create", false, "create the SQLite database when the file does not exist (without it a mistyped --db is an error, not a new empty database)")
}

// LoadAdmin merges flags, environment and file for the admin commands.
func LoadAdmin(fs *pflag.FlagSet) (Admin, error) {
	l, err := newLoader(fs, func(v *viper.Viper, file string) (map[string]any, error) {
		return readFile(v, file, hubKeys())
	})
	if err != nil {
		return Admin{}, err
	}
	v := l.v
	v.SetDefault("db_max_conns", 4)
	if err := bindFlags(v, fs); err != nil {
		return Admin{}, err
	}
	a := Admin{File: l.file}
	if a.DB, err = getString(v, "db"); err != nil {
		return Admin{}, err
	}
	if a.DBMaxConns, err = getInt(v, "db_max_conns"); err != nil {
		return Admin{}, err
	}
	if a.MultiSite, err = getBool(v, "multi_site"); err != nil {
		return Admin{}, err
	}
	if a.VaultKeyFile, err = getString(v, "vault_key_file"); err != nil {
		return Admin{}, err
	}
	if a.VaultKeySource, err = getString(v, "vault_key_source"); err != nil {
		return Admin{}, err
	}
	if strings.TrimSpace(a.DB) == "" {
		return Admin{}, fmt.Errorf("db: must not be empty")
	}
	return a, nil
}

// bindFlags binds every flag of fs under its underscore key.
func bindFlags(v *viper.Viper, fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "help" || err != nil {
			return
		}
		key := strings.ReplaceAll(f.Name, "-", "_")
		if e := v.BindPFlag(key, f); e != nil {
			err = fmt.Errorf("bind flag %s: %w", f.Name, e)
		}
	})
	return err
}
