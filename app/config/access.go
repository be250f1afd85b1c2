package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Access configures who may use the hub: the legacy password, sessions,
// multi-site mode, the public address (WebSocket origins, CSRF, OIDC
// redirect), trusted proxies, the credential vault and OIDC SSO.
type Access struct {
	// AuthPassword is the legacy bootstrap password (-auth-password, env
	// NETMON_AUTH_PASSWORD or AUTH_PASSWORD). Empty, with no RBAC user,
	// means authentication is off.
	AuthPassword string
	// SessionStore is "memory" or "db" (shared by several hubs).
	SessionStore string
	// PublicURL is the hub's external address, e.g. https://netmon.example.
	PublicURL string
	// MultiSite makes site a hard authorisation boundary.
	MultiSite bool
	// TrustedProxies are the addresses (IPs or CIDRs) whose
	// X-Forwarded-For / X-Real-IP is believed; empty = the direct peer is
	// the client, always.
	TrustedProxies []string
	// VaultKeyFile holds the vault master key (hex); generated if absent.
	VaultKeyFile string
	// VaultKeySource is "file" or "env" (NETMON_VAULT_MASTER_KEY).
	VaultKeySource string
	// OIDC is the YAML block oidc.
	OIDC OIDC
}

// OIDC is the SSO provider configuration (YAML block oidc).
type OIDC struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL defaults to <public-url>/api/auth/oidc/callback.
	RedirectURL string
	// GroupRoles maps a provider group (or role) to a netmon role.
	GroupRoles map[string]string
	// DefaultRole is given to users in no mapped group (viewer).
	DefaultRole string
}

// DefaultAccess returns the defaults of spec section 1.
func DefaultAccess() Access {
	return Access{SessionStore: "memory", VaultKeyFile: "vault.key", VaultKeySource: "file", OIDC: OIDC{DefaultRole: "viewer"}}
}

var accessKeys = []string{"auth_password", "session_store", "public_url", "multi_site", "trusted_proxies", "vault_key_file", "vault_key_source", "oidc"}

// blockKeys lists the keys allowed inside YAML blocks.
var blockKeys = map[string][]string{
	"oidc": {"issuer", "client_id", "client_secret", "redirect_url", "group_roles", "default_role"},
}

func addAccessFlags(fs *pflag.FlagSet) {
	d := DefaultAccess()
	fs.String("auth-password", "", "legacy UI password (bootstrap admin); empty and no RBAC user = authentication OFF; prefer the env NETMON_AUTH_PASSWORD or AUTH_PASSWORD, flags show in ps")
	fs.String("session-store", d.SessionStore, "where sessions live: memory (one hub) or db (shared by hubs on one database; only token hashes stored) (env NETMON_SESSION_STORE)")
	fs.String("public-url", "", "external address of the hub, e.g. https://netmon.example; trusted origin for cookie requests and default OIDC redirect base (env NETMON_PUBLIC_URL)")
	fs.Bool("multi-site", false, "make site a hard authorisation boundary; enables the site-admin and global-admin roles (env NETMON_MULTI_SITE)")
	fs.StringSlice("trusted-proxies", nil, "comma-separated IPs or CIDRs of reverse proxies whose X-Forwarded-For is believed for the client address (env NETMON_TRUSTED_PROXIES)")
	fs.String("vault-key-file", d.VaultKeyFile, "credential-vault master key file (64 hex characters; generated with mode 0600 if absent) (env NETMON_VAULT_KEY_FILE)")
	fs.String("vault-key-source", d.VaultKeySource, "where the vault key comes from: file, or env (NETMON_VAULT_MASTER_KEY, hex or base64; never written to disk) (env NETMON_VAULT_KEY_SOURCE)")
}

func loadAccess(v *viper.Viper, a *Access) error {
	*a = DefaultAccess()
	// The spec names AUTH_PASSWORD; NETMON_AUTH_PASSWORD follows our prefix.
	if err := v.BindEnv("auth_password", "NETMON_AUTH_PASSWORD", "AUTH_PASSWORD"); err != nil {
		return err
	}
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"auth_password", &a.AuthPassword},
		{"session_store", &a.SessionStore},
		{"public_url", &a.PublicURL},
		{"vault_key_file", &a.VaultKeyFile},
		{"vault_key_source", &a.VaultKeySource},
		{"oidc.issuer", &a.OIDC.Issuer},
		{"oidc.client_id", &a.OIDC.ClientID},
		{"oidc.client_secret", &a.OIDC.ClientSecret},
		{"oidc.redirect_url", &a.OIDC.RedirectURL},
		{"oidc.default_role", &a.OIDC.DefaultRole},
	} {
		val, err := getString(v, f.key)
		if err != nil {
			return err
		}
		if val != "" || f.key == "auth_password" {
			*f.dst = val
		}
	}
	if a.MultiSite, err = getBool(v, "multi_site"); err != nil {
		return err
	}
	if a.TrustedProxies, err = getStrings(v, "trusted_proxies"); err != nil {
		return err
	}
	if raw := v.Get("oidc.group_roles"); raw != nil {
		m, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("oidc.group_roles: must be a mapping of group to role")
		}
		a.OIDC.GroupRoles = map[string]string{}
		for g, r := range m {
			rs, ok := r.(string)
			if !ok {
				return fmt.Errorf("oidc.group_roles.%s: role must be a string", g)
			}
			a.OIDC.GroupRoles[g] = rs
		}
	}
	return nil
}

// getStrings reads a list from a flag (slice), an env var or YAML
// (comma-separated string or sequence).
func getStrings(v *viper.Viper, key string) ([]string, error) {
	var parts []string
	switch x := v.Get(key).(type) {
	case nil:
		return nil, nil
	case []string:
		parts = x
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s: %v is not a string", key, e)
			}
			parts = append(parts, s)
		}
	case string:
		// pflag's StringSlice reaches viper as "[a,b]" when unchanged.
		parts = strings.Split(strings.Trim(x, "[]"), ",")
	default:
		return nil, fmt.Errorf("%s: %v is not a list", key, x)
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}

func (a Access) validate() error {
	switch a.SessionStore {
	case "memory", "db":
	default:
		return fmt.Errorf("session-store %q: want memory or db", a.SessionStore)
	}
	switch a.VaultKeySource {
	case "file", "env":
	default:
		return fmt.Errorf("vault-key-source %q: want file or env", a.VaultKeySource)
	}
	if a.VaultKeySource == "file" && strings.TrimSpace(a.VaultKeyFile) == "" {
		return fmt.Errorf("vault-key-file: must not be empty")
	}
	if a.PublicURL != "" {
		u, err := url.Parse(a.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("public-url %q: want an absolute http(s) URL such as https://netmon.example", a.PublicURL)
		}
	}
	if _, err := ParseProxies(a.TrustedProxies); err != nil {
		return err
	}
	if a.OIDC.Issuer != "" {
		if a.OIDC.ClientID == "" {
			return fmt.Errorf("oidc.client_id: required when oidc.issuer is set")
		}
		if a.OIDC.RedirectURL == "" && a.PublicURL == "" {
			return fmt.Errorf("oidc.redirect_url: required when -public-url is not set")
		}
	}
	return nil
}

// ParseProxies parses trusted proxy addresses and prefixes.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("trusted-proxies: %q is not an IP address or CIDR", s)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// OIDCRedirectURL is the configured redirect or the public URL's default.
func (a Access) OIDCRedirectURL() string {
	if a.OIDC.RedirectURL != "" {
		return a.OIDC.RedirectURL
	}
	return strings.TrimRight(a.PublicURL, "/") + "/api/auth/oidc/callback"
}
