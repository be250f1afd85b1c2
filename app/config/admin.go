package config

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"netmon/app/auth"
	"netmon/store"
	"netmon/store/vault"
)

// AdminConfig is the configuration of the admin commands, which work
// directly on the hub's database: the same keys, flags, variables and
// file as the hub, for the components they open.
type AdminConfig struct {
	// Store is the hub's database (-db, NETMON_DB_MAX_CONNS).
	Store store.Config
	// Auth is the hub's authentication; only MultiSite is a setting here.
	Auth auth.Config
	// Vault finds the hub's vault key, for the commands that seal a secret
	// (rotate-static).
	Vault vault.Config
	// File is the hub's YAML file the configuration was read from, if any.
	File string
}

// DefaultAdminConfig returns the components' defaults, with a small pool:
// a command makes a few queries.
func DefaultAdminConfig() AdminConfig {
	c := AdminConfig{Store: store.DefaultConfig(), Auth: auth.DefaultConfig(), Vault: vault.DefaultConfig()}
	c.Store.MaxConns = 4
	return c
}

// adminBindings are the hub settings the admin commands read, with their
// own help.
var adminBindings = []binding[AdminConfig]{
	{key: "config", flag: "config", field: "File", kind: str{},
		usage: "the hub's YAML configuration file (env NETMON_CONFIG)",
		ptr:   func(c *AdminConfig) any { return &c.File }},
	{key: "db", flag: "db", field: "Store.DSN", kind: dsn{},
		usage: "the hub's database: SQLite file path or postgres:// DSN (env NETMON_DB)",
		ptr:   func(c *AdminConfig) any { return &c.Store.DSN }},
	{key: "db_max_conns", field: "Store.MaxConns", kind: integer{},
		ptr: func(c *AdminConfig) any { return &c.Store.MaxConns }},
	{key: "multi_site", flag: "multi-site", field: "Auth.MultiSite", kind: boolean{},
		usage: "the hub runs with -multi-site (allows the site-admin and global-admin roles) (env NETMON_MULTI_SITE)",
		ptr:   func(c *AdminConfig) any { return &c.Auth.MultiSite }},
	{key: "vault_key_file", flag: "vault-key-file", field: "Vault.File", kind: str{keepEmpty: true},
		usage: "the hub's vault key file, for commands that seal a secret (env NETMON_VAULT_KEY_FILE)",
		ptr:   func(c *AdminConfig) any { return &c.Vault.File }},
	{key: "vault_key_source", flag: "vault-key-source", field: "Vault.Source", kind: str{keepEmpty: true},
		usage: "file, or env (NETMON_VAULT_MASTER_KEY) (env NETMON_VAULT_KEY_SOURCE)",
		ptr:   func(c *AdminConfig) any { return &c.Vault.Source }},
}

// AddAdminFlags declares the admin commands' persistent flags.
func AddAdminFlags(fs *pflag.FlagSet) {
	declare(fs, adminBindings, DefaultAdminConfig())
	fs.Bool("create", false, "create the SQLite database when the file does not exist (without it a mistyped --db is an error, not a new empty database)")
}

// LoadAdmin merges flags, environment and the hub's file for the admin
// commands (a file with keys the hub does not know is refused as the hub
// refuses it).
func LoadAdmin(fs *pflag.FlagSet) (AdminConfig, error) {
	l, err := newLoader(fs, func(v *viper.Viper, file string) (map[string]any, error) {
		return readFile(v, file, hubKeys())
	})
	if err != nil {
		return AdminConfig{}, err
	}
	c := DefaultAdminConfig()
	if _, err := apply(l, adminBindings, &c); err != nil {
		return AdminConfig{}, err
	}
	if strings.TrimSpace(c.Store.DSN) == "" {
		return AdminConfig{}, fmt.Errorf("db: must not be empty")
	}
	return c, nil
}
