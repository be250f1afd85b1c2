package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"netmon/app/netguard"
)

// binding ties one setting — a YAML key, its flag and its environment
// variable — to the one field of a component Config that holds it. The
// field's default is the component's DefaultConfig(): the flag is declared
// with it, so no default is written twice. C is the composed configuration
// (HubConfig or AgentConfig).
type binding[C any] struct {
	// key is the YAML key (a dot for a block: oidc.client_secret); its
	// environment variable is NETMON_ + key upper-cased, '.' as "__".
	key string
	// flag is the flag's name; "" = file and environment only.
	flag string
	// field is the Go path of the field in C (Retention.Hours), for the
	// table test and `netmon config print`.
	field string
	// usage is the flag's help text.
	usage string
	// env lists the variables read, first set wins; nil = the key's one.
	env []string
	// secret values are printed redacted.
	secret bool
	// block: made from a component's Config (blockBindings), checked by
	// validateBlocks.
	block bool
	kind  kind
	// ptr returns the address of the field in c.
	ptr func(c *C) any
}

// envNames are the environment variables of b, in the order read.
func (b binding[C]) envNames() []string {
	if b.env != nil {
		return b.env
	}
	return []string{envName(b.key)}
}

// envName is the environment variable of a configuration key.
func envName(key string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "__").Replace(key))
}

// kind is how a field's type meets its flag and its YAML / environment
// spelling. Most are the identity; a few convert units or shape (the flag
// -agent-interval counts seconds, the field is a time.Duration).
type kind interface {
	// declare adds the flag to fs with the field's default value def
	// (a pointer to the field of a default configuration).
	declare(fs *pflag.FlagSet, name, usage string, def any)
	// load parses the merged value of key into the field at dst.
	load(v *viper.Viper, key string, dst any) error
	// show formats the field at p as the user writes it.
	show(p any) string
}

// str is a string field. keepEmpty: an empty value leaves the default
// (for the access keys, as they always did).
type str struct{ keepEmpty bool }

func (str) declare(fs *pflag.FlagSet, name, usage string, def any) {
	fs.String(name, *def.(*string), usage)
}

func (k str) load(v *viper.Viper, key string, dst any) error {
	s, err := getString(v, key)
	if err != nil {
		return err
	}
	if s != "" || !k.keepEmpty {
		*dst.(*string) = s
	}
	return nil
}

func (str) show(p any) string { return *p.(*string) }

// integer is an int field.
type integer struct{}

func (integer) declare(fs *pflag.FlagSet, name, usage string, def any) {
	fs.Int(name, *def.(*int), usage)
}

func (integer) load(v *viper.Viper, key string, dst any) (err error) {
	*dst.(*int), err = getInt(v, key)
	return err
}

func (integer) show(p any) string { return strconv.Itoa(*p.(*int)) }

// boolean is a bool field.
type boolean struct{}

func (boolean) declare(fs *pflag.FlagSet, name, usage string, def any) {
	fs.Bool(name, *def.(*bool), usage)
}

func (boolean) load(v *viper.Viper, key string, dst any) (err error) {
	*dst.(*bool), err = getBool(v, key)
	return err
}

func (boolean) show(p any) string { return strconv.FormatBool(*p.(*bool)) }

// list is a []string field: a comma-separated flag, variable or YAML
// string, or a YAML sequence.
type list struct{}

func (list) declare(fs *pflag.FlagSet, name, usage string, def any) {
	fs.StringSlice(name, *def.(*[]string), usage)
}

func (list) load(v *viper.Viper, key string, dst any) (err error) {
	*dst.(*[]string), err = getStrings(v, key)
	return err
}

func (list) show(p any) string { return strings.Join(*p.(*[]string), ",") }

// seconds is a time.Duration field set by a whole number of seconds.
type seconds struct{}

func (seconds) declare(fs *pflag.FlagSet, name, usage string, def any) {
	fs.Int(name, int(*def.(*time.Duration)/time.Second), usage)
}

func (seconds) load(v *viper.Viper, key string, dst any) error {
	n, err := getInt(v, key)
	*dst.(*time.Duration) = time.Duration(n) * time.Second
	return err
}

func (seconds) show(p any) string { return strconv.Itoa(int(*p.(*time.Duration) / time.Second)) }

// mebibytes is a byte count (int64) set in MiB.
type mebibytes struct{}

func (mebibytes) declare(fs *pflag.FlagSet, name, usage string, def any) {
	fs.Int(name, int(*def.(*int64)>>20), usage)
}

func (mebibytes) load(v *viper.Viper, key string, dst any) error {
	n, err := getInt(v, key)
	*dst.(*int64) = int64(n) << 20
	return err
}

func (mebibytes) show(p any) string { return strconv.FormatInt(*p.(*int64)>>20, 10) }

// udpPort is a listen address (":2055", "" = off) set by a port number
// (0 = off) on every interface.
type udpPort struct{}

func (udpPort) declare(fs *pflag.FlagSet, name, usage string, def any) {
	fs.Int(name, portOf(*def.(*string)), usage)
}

func (udpPort) load(v *viper.Viper, key string, dst any) error {
	n, err := getInt(v, key)
	if err != nil {
		return err
	}
	if n < 0 || n > 65535 {
		return fmt.Errorf("%s %d: must be between 1 and 65535 (0 = off)", strings.ReplaceAll(key, "_", "-"), n)
	}
	*dst.(*string) = ""
	if n > 0 {
		*dst.(*string) = ":" + strconv.Itoa(n)
	}
	return nil
}

func (udpPort) show(p any) string { return strconv.Itoa(portOf(*p.(*string))) }

// portOf is the port of a listen address (0 for "" or no port).
func portOf(addr string) int {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(addr[i+1:])
	return n
}

// roleMap is a YAML mapping of strings (oidc.group_roles); no flag.
type roleMap struct{}

func (roleMap) declare(*pflag.FlagSet, string, string, any) {}

func (roleMap) load(v *viper.Viper, key string, dst any) error {
	raw := v.Get(key)
	if raw == nil {
		return nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: must be a mapping of group to role", key)
	}
	out := map[string]string{}
	for g, r := range m {
		rs, ok := r.(string)
		if !ok {
			return fmt.Errorf("%s.%s: role must be a string", key, g)
		}
		out[g] = rs
	}
	*dst.(*map[string]string) = out
	return nil
}

func (roleMap) show(p any) string {
	m := *p.(*map[string]string)
	parts := make([]string, 0, len(m))
	for g, r := range m {
		parts = append(parts, g+"="+r)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// dsn is a database DSN; its password is hidden when shown.
type dsn struct{ str }

func (dsn) show(p any) string {
	s := *p.(*string)
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// Source says where an effective value came from.
type Source struct {
	// Kind is "flag", "env", "file" or "default".
	Kind string
	// Name is the flag (--port), the variable (NETMON_PORT) or the file.
	Name string
}

func (s Source) String() string {
	if s.Name == "" {
		return s.Kind
	}
	return s.Kind + " " + s.Name
}

// Setting is one effective value, as `netmon config print` shows it.
type Setting struct {
	// Key is the YAML key.
	Key string
	// Field is the Go path of the component field it sets.
	Field string
	// Value is the value as the user writes it; secrets are redacted.
	Value string
	// Source is where the value came from.
	Source Source
}

// Redacted stands for a secret that is set.
const Redacted = "<redacted>"

// loader merges flags, environment and file (a local viper) and records
// where each value came from.
type loader struct {
	v      *viper.Viper
	fs     *pflag.FlagSet
	file   string
	inFile map[string]bool // keys the file holds, blocks as "oidc.issuer"
}

// source is where the value of a binding comes from, following viper's
// precedence: a flag given, a variable set (not empty), the file, the
// default.
func source[C any](l *loader, b binding[C]) Source {
	if b.flag != "" && l.fs.Changed(b.flag) {
		return Source{"flag", "--" + b.flag}
	}
	for _, e := range b.envNames() {
		if os.Getenv(e) != "" {
			return Source{"env", e}
		}
	}
	if l.inFile[b.key] {
		return Source{"file", l.file}
	}
	return Source{Kind: "default"}
}

// declare declares the flags of bs on fs with the defaults of def.
func declare[C any](fs *pflag.FlagSet, bs []binding[C], def C) {
	for _, b := range bs {
		if b.flag != "" {
			b.kind.declare(fs, b.flag, b.usage, b.ptr(&def))
		}
	}
}

// apply loads every binding whose value is not the default into c and
// returns the effective settings. The first error is returned.
func apply[C any](l *loader, bs []binding[C], c *C) ([]Setting, error) {
	out := make([]Setting, 0, len(bs))
	var first error
	for _, b := range bs {
		if err := l.v.BindEnv(append([]string{b.key}, b.envNames()...)...); err != nil {
			return nil, err
		}
		if f := l.fs.Lookup(b.flag); b.flag != "" && f != nil {
			if err := l.v.BindPFlag(b.key, f); err != nil {
				return nil, fmt.Errorf("bind flag %s: %w", b.flag, err)
			}
		}
		src := source(l, b)
		if src.Kind != "default" {
			if err := b.kind.load(l.v, b.key, b.ptr(c)); err != nil && first == nil {
				first = err
			}
		}
		val := b.kind.show(b.ptr(c))
		if b.secret && val != "" {
			val = Redacted
		}
		out = append(out, Setting{Key: b.key, Field: b.field, Value: val, Source: src})
	}
	return out, first
}

// fileKeys flattens a YAML document's keys one level deep ("oidc.issuer").
func fileKeys(top map[string]any) map[string]bool {
	keys := map[string]bool{}
	for k, v := range top {
		keys[k] = true
		if m, ok := v.(map[string]any); ok {
			for sk := range m {
				keys[k+"."+sk] = true
			}
		}
	}
	return keys
}

// cidrList is a []netip.Prefix field: comma-separated CIDRs (a bare
// address is its own /32 or /128), as a flag, variable or YAML string, or
// a YAML sequence.
type cidrList struct{}

func (cidrList) declare(fs *pflag.FlagSet, name, usage string, def any) {
	var s []string
	for _, p := range *def.(*[]netip.Prefix) {
		s = append(s, p.String())
	}
	fs.StringSlice(name, s, usage)
}

func (cidrList) load(v *viper.Viper, key string, dst any) error {
	items, err := getStrings(v, key)
	if err != nil {
		return err
	}
	ps, err := netguard.ParseAllow(strings.Join(items, ","))
	if err != nil {
		return err
	}
	*dst.(*[]netip.Prefix) = ps
	return nil
}

func (cidrList) show(p any) string {
	var s []string
	for _, x := range *p.(*[]netip.Prefix) {
		s = append(s, x.String())
	}
	return strings.Join(s, ",")
}
