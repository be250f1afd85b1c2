package vault

// Key sources accepted in Config.Source.
const (
	// SourceFile reads the master key from Config.File, generating it on
	// first start.
	SourceFile = "file"
	// SourceEnv reads the master key from the environment variable EnvKey
	// and never writes it anywhere.
	SourceEnv = "env"
)

// EnvKey is the environment variable holding the master key when the
// source is "env": 32 bytes as 64 hex characters or as base64 (standard
// or URL alphabet, with or without padding).
const EnvKey = "NETMON_VAULT_MASTER_KEY"

// defaultFile is the key file of DefaultConfig (spec: -vault-key-file).
const defaultFile = "vault.key"

// Config says where the vault's master key comes from.
type Config struct {
	// Source is "file" (the default when empty) or "env". With "file" the
	// key lives in File and is generated there on first start; with "env"
	// it comes from the NETMON_VAULT_MASTER_KEY variable, for deployments
	// whose secrets manager injects it, and is never written to disk.
	Source string
	// File is the path of the key file read with Source "file": 64 hex
	// characters, surrounding whitespace ignored. Empty means "vault.key"
	// in the working directory. The file should be readable by the hub's
	// user only (mode 0600); a generated file is created that way.
	File string
}

// DefaultConfig returns the default configuration: a key file named
// vault.key in the working directory, generated when missing.
func DefaultConfig() Config {
	return Config{Source: SourceFile, File: defaultFile}
}
