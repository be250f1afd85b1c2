// Package config turns flags, environment variables and an optional YAML
// file into validated configuration structs for the hub (and, later, the
// agent). Precedence, highest first: flags set on the command line,
// environment variables (NETMON_<KEY>), the YAML file given by --config,
// built-in defaults.
//
// Every key has one name in three spellings: the flag `retention-hours`, the
// YAML key `retention_hours` and the variable NETMON_RETENTION_HOURS. A local
// *viper.Viper does the merging (never viper's package singleton), and the
// typed getters below refuse values that do not parse instead of silently
// turning them into zero.
package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"netmon/app/logging"
)

// EnvPrefix is the prefix of every environment variable netmon reads.
const EnvPrefix = "NETMON"

// Hub is the hub's configuration (spec section 1, "Runtime configuration").
// Later issues add their components' Config structs as fields.
type Hub struct {
	// Port is the HTTP port the hub listens on.
	Port int
	// Listen is the address the hub listens on ("" = all interfaces, the
	// spec's default; 127.0.0.1 keeps it on this machine).
	Listen string
	// DataDir is where relative file paths (the SQLite database, the vault
	// key, recordings, GeoIP databases, TLS files) are resolved; LoadHub
	// makes them absolute against it.
	DataDir string
	// Dev skips the embedded web UI (development with a separate frontend server).
	Dev bool
	// DB is a SQLite file path or a postgres:// (postgresql://) DSN.
	DB string
	// DBMaxConns is the database read pool size (env NETMON_DB_MAX_CONNS only).
	DBMaxConns int
	// RetentionHours is how long raw time-series rows are kept.
	RetentionHours int
	// Prune runs the database maintenance loop (retention); one hub only.
	Prune bool
	// LogFormat is "text" or "json".
	LogFormat string
	// LogLevel is "debug", "info", "warn" or "error".
	LogLevel string
	// MaxConns caps the HTTP connections open at once (0 = derived from
	// the open file limit: the limit less a quarter kept in reserve).
	MaxConns int
	// MaxConnsPerSource caps one source address's connections (0 = a
	// quarter of MaxConns).
	MaxConnsPerSource int
	// File is the YAML file the configuration was read from, if any.
	File string
	// Access configures authentication, sessions, the vault and SSO.
	Access Access
	// Capture configures the hub-local capture, recordings and GeoIP.
	Capture Capture
	// Collectors configures the flow and syslog listeners and the queue.
	Collectors Collectors
	// Fleet configures agent enrollment and telemetry and the hub's TLS.
	Fleet Fleet
}

// DefaultHub returns the defaults of spec section 1.
func DefaultHub() Hub {
	return Hub{
		Port:           8080,
		DataDir:        ".",
		DB:             "netmon.db",
		DBMaxConns:     32,
		RetentionHours: 168,
		Prune:          true,
		LogFormat:      "text",
		LogLevel:       "info",
		Access:         DefaultAccess(),
		Capture:        DefaultCapture(),
		Collectors:     DefaultCollectors(),
		Fleet:          DefaultFleet(),
	}
}

// AddHubFlags declares the hub's flags on fs with their defaults and help.
// Only flags whose feature exists are declared: a flag that does nothing is
// worse than a missing one.
func AddHubFlags(fs *pflag.FlagSet) {
	d := DefaultHub()
	fs.Int("port", d.Port, "HTTP port the hub listens on (env NETMON_PORT)")
	fs.String("data-dir", d.DataDir, "directory that relative paths of files the hub keeps (-db, -vault-key-file, -record-dir, -geoip-dir, -tls-dir) are under (env NETMON_DATA_DIR)")
	fs.String("listen", d.Listen, "address to listen on, e.g. 127.0.0.1 for this machine only; empty = all interfaces (env NETMON_LISTEN)")
	fs.Bool("dev", d.Dev, "development mode: do not serve the embedded web UI (env NETMON_DEV)")
	fs.String("db", d.DB, "SQLite file path, or a postgres:// DSN to use PostgreSQL (env NETMON_DB)")
	fs.Int("retention-hours", d.RetentionHours, "hours of raw time-series data kept before the maintenance loop deletes it (env NETMON_RETENTION_HOURS)")
	fs.Bool("prune", d.Prune, "run the database maintenance loop every 10 minutes; turn off on all but one hub sharing a database (env NETMON_PRUNE)")
	fs.Int("max-conns", 0, "most HTTP connections open at once; at the cap the connection that waited longest without sending a whole request is closed; 0 = the open file limit less a quarter (env NETMON_MAX_CONNS)")
	fs.Int("max-conns-per-source", 0, "most HTTP connections from one address (same rule inside it); 0 = a quarter of max-conns (env NETMON_MAX_CONNS_PER_SOURCE)")
	fs.String("config", "", "YAML configuration file; keys are the flag names with '_' for '-' (env NETMON_CONFIG)")
	fs.String("log-format", d.LogFormat, "log format: text or json (env NETMON_LOG_FORMAT)")
	fs.String("log-level", d.LogLevel, "minimum log level: debug, info, warn or error (env NETMON_LOG_LEVEL)")
	addAccessFlags(fs)
	addCaptureFlags(fs)
	addCollectorFlags(fs)
	addFleetFlags(fs)
}

// hubKeys are the keys a hub configuration file may hold. A file with any
// other key is refused, so a typo is an error rather than a silent default.
var hubKeys = append([]string{"port", "listen", "data_dir", "dev", "db", "db_max_conns", "retention_hours", "prune", "log_format", "log_level", "max_conns", "max_conns_per_source"}, append(append(append(accessKeys, captureKeys...), collectorKeys...), fleetKeys...)...)

// LoadHub merges fs (already parsed), the process environment and the YAML
// file named by --config / NETMON_CONFIG, then validates the result.
func LoadHub(fs *pflag.FlagSet) (Hub, error) {
	v := newViper()
	d := DefaultHub()
	v.SetDefault("db_max_conns", d.DBMaxConns)
	if err := bindFlags(v, fs); err != nil {
		return Hub{}, err
	}
	file, err := getString(v, "config")
	if err != nil {
		return Hub{}, err
	}
	if file != "" {
		if err := readFile(v, file, hubKeys); err != nil {
			return Hub{}, err
		}
	}
	var c Hub
	c.File = file
	var errs []error
	get := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	c.Port, err = getInt(v, "port")
	get(err)
	c.Listen, err = getString(v, "listen")
	get(err)
	c.DataDir, err = getString(v, "data_dir")
	get(err)
	c.Dev, err = getBool(v, "dev")
	get(err)
	c.DB, err = getString(v, "db")
	get(err)
	c.DBMaxConns, err = getInt(v, "db_max_conns")
	get(err)
	c.RetentionHours, err = getInt(v, "retention_hours")
	get(err)
	c.Prune, err = getBool(v, "prune")
	get(err)
	c.LogFormat, err = getString(v, "log_format")
	get(err)
	c.MaxConns, err = getInt(v, "max_conns")
	get(err)
	c.MaxConnsPerSource, err = getInt(v, "max_conns_per_source")
	get(err)
	c.LogLevel, err = getString(v, "log_level")
	get(err)
	get(loadAccess(v, &c.Access))
	get(loadCapture(v, &c.Capture))
	get(loadCollectors(v, &c.Collectors))
	get(loadFleet(v, &c.Fleet))
	if len(errs) > 0 {
		return Hub{}, errs[0]
	}
	return c, c.Validate()
}

// ResolvePaths makes the hub's relative file paths absolute under
// DataDir, so that a hub started from another directory finds its files
// (instead of quietly making a new empty database and vault key there)
// and logs where they are. `netmon hub` calls it after LoadHub.
func (c *Hub) ResolvePaths() error {
	dir := c.DataDir
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("data-dir %q: %w", dir, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return fmt.Errorf("data-dir %s: not a directory", abs)
	}
	c.DataDir = abs
	under := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(abs, *p)
		}
	}
	if !strings.Contains(c.DB, "://") {
		under(&c.DB)
	}
	under(&c.Access.VaultKeyFile)
	under(&c.Capture.RecordDir)
	under(&c.Capture.GeoIPDir)
	under(&c.Fleet.TLSDir)
	under(&c.Fleet.TLSCert)
	under(&c.Fleet.TLSKey)
	return nil
}

// Validate checks ranges and enumerations and names the offending key.
func (c Hub) Validate() error {
	switch {
	case c.Port < 1 || c.Port > 65535:
		return fmt.Errorf("port %d: must be between 1 and 65535", c.Port)
	case c.Listen != "" && net.ParseIP(strings.Trim(c.Listen, "[]")) == nil && c.Listen != "localhost":
		return fmt.Errorf("listen %q: want an IP address of this machine (or empty for all interfaces)", c.Listen)
	case strings.TrimSpace(c.DB) == "":
		return fmt.Errorf("db: must not be empty")
	case c.DBMaxConns < 1 || c.DBMaxConns > 1000:
		return fmt.Errorf("db_max_conns %d (NETMON_DB_MAX_CONNS): must be between 1 and 1000", c.DBMaxConns)
	case c.RetentionHours < 1:
		return fmt.Errorf("retention-hours %d: must be at least 1", c.RetentionHours)
	case c.MaxConns < 0 || c.MaxConns == 1:
		return fmt.Errorf("max-conns %d: must be at least 2 (0 = derived from the open file limit)", c.MaxConns)
	case c.MaxConnsPerSource < 0:
		return fmt.Errorf("max-conns-per-source %d: must be at least 1 (0 = a quarter of max-conns)", c.MaxConnsPerSource)
	}
	if _, err := logging.New(nopWriter{}, c.LogFormat, c.LogLevel); err != nil {
		return err
	}
	if err := c.Access.validate(); err != nil {
		return err
	}
	if err := c.Capture.validate(); err != nil {
		return err
	}
	if err := c.Collectors.validate(); err != nil {
		return err
	}
	return c.Fleet.validate()
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// newViper returns a local viper that reads NETMON_* variables.
func newViper() *viper.Viper {
	v := viper.New()
	v.SetEnvPrefix(EnvPrefix)
	// oidc.client_secret <-> NETMON_OIDC__CLIENT_SECRET, as the spec maps ai.* to NETMON_AI__*.
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "__"))
	v.AutomaticEnv()
	return v
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

// readFile loads a YAML file into v after checking its top-level keys.
func readFile(v *viper.Viper, file string, known []string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read config file: %w", err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(raw, &top); err != nil {
		return fmt.Errorf("config file %s: %w", file, err)
	}
	for k, val := range top {
		if !containsKey(known, k) {
			return fmt.Errorf("config file %s: unknown key %q%s (known keys: %s)", file, k, DidYouMean(k, known), strings.Join(known, ", "))
		}
		if sub, ok := blockKeys[k]; ok {
			m, isMap := val.(map[string]any)
			if !isMap && val != nil {
				return fmt.Errorf("config file %s: %s must be a mapping", file, k)
			}
			for sk := range m {
				if !containsKey(sub, sk) {
					return fmt.Errorf("config file %s: unknown key %q in %s%s (known keys: %s)", file, sk, k, DidYouMean(sk, sub), strings.Join(sub, ", "))
				}
			}
		}
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(strings.NewReader(string(raw))); err != nil {
		return fmt.Errorf("config file %s: %w", file, err)
	}
	return nil
}

// source names key with the environment variable it was read from, when
// that variable is set: a value that does not parse is then found where
// it was written.
func source(key string) string {
	env := EnvPrefix + "_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "__").Replace(key))
	if _, ok := os.LookupEnv(env); ok {
		return key + " (from " + env + ")"
	}
	return key
}

func containsKey(list []string, k string) bool {
	for _, s := range list {
		if s == k {
			return true
		}
	}
	return false
}

// getInt reads an integer key; strings (from the environment) must be
// decimal integers, YAML numbers must be whole.
func getInt(v *viper.Viper, key string) (int, error) {
	switch x := v.Get(key).(type) {
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case float64:
		if x != float64(int(x)) {
			return 0, fmt.Errorf("%s: %v is not a whole number", key, x)
		}
		return int(x), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not an integer", source(key), x)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("%s: %v is not an integer", key, x)
	}
}

// getBool reads a boolean key; strings accept what strconv.ParseBool does.
func getBool(v *viper.Viper, key string) (bool, error) {
	switch x := v.Get(key).(type) {
	case bool:
		return x, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		if err != nil {
			return false, fmt.Errorf("%s: %q is not a boolean (true or false)", source(key), x)
		}
		return b, nil
	default:
		return false, fmt.Errorf("%s: %v is not a boolean", key, x)
	}
}

// getString reads a string key.
func getString(v *viper.Viper, key string) (string, error) {
	switch x := v.Get(key).(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case int, int64, float64, bool:
		return fmt.Sprint(x), nil
	default:
		return "", fmt.Errorf("%s: %v is not a string", key, x)
	}
}

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
	d := DefaultHub()
	fs.String("db", d.DB, "the hub's database: SQLite file path or postgres:// DSN (env NETMON_DB)")
	fs.String("config", "", "the hub's YAML configuration file (env NETMON_CONFIG)")
	fs.Bool("multi-site", false, "the hub runs with -multi-site (allows the site-admin and global-admin roles) (env NETMON_MULTI_SITE)")
	fs.String("vault-key-file", DefaultAccess().VaultKeyFile, "the hub's vault key file, for commands that seal a secret (env NETMON_VAULT_KEY_FILE)")
	fs.String("vault-key-source", DefaultAccess().VaultKeySource, "file, or env (NETMON_VAULT_MASTER_KEY) (env NETMON_VAULT_KEY_SOURCE)")
	fs.Bool("create", false, "create the SQLite database when the file does not exist (without it a mistyped --db is an error, not a new empty database)")
}

// LoadAdmin merges flags, environment and file for the admin commands.
func LoadAdmin(fs *pflag.FlagSet) (Admin, error) {
	v := newViper()
	v.SetDefault("db_max_conns", 4)
	if err := bindFlags(v, fs); err != nil {
		return Admin{}, err
	}
	var a Admin
	var err error
	if a.File, err = getString(v, "config"); err != nil {
		return Admin{}, err
	}
	if a.File != "" {
		if err := readFile(v, a.File, hubKeys); err != nil {
			return Admin{}, err
		}
	}
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
