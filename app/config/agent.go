package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"netmon/app/logging"
)

// Agent is the agent's configuration (spec 1, "Agent settings"). Nested
// YAML keys map to flags and variables like this:
//
//	hub.url                 -hub-url         NETMON_HUB__URL
//	hub.token               -hub-token       NETMON_HUB__TOKEN   (also -enroll-token)
//	hub.ca                  -hub-ca          NETMON_HUB__CA
//	collect.method          -collect-method  NETMON_COLLECT__METHOD
//	collect.pcap_interface  -pcap-interface  NETMON_COLLECT__PCAP_INTERFACE
//	name, site, state       -name, -site, -state   NETMON_NAME, NETMON_SITE, NETMON_STATE
type Agent struct {
	// HubURL is the hub's base address (http:// or https://).
	HubURL string
	// HubToken is the enroll token, needed for the first enrollment and
	// for re-enrollment after the hub refuses the agent's token.
	HubToken string
	// HubCA is a PEM file of the CA the hub's certificate must chain to;
	// empty = trust the hub on first use and pin the CA it returns.
	HubCA string
	// Name is how the hub shows this machine (default: the host name).
	Name string
	// Site is the machine's site (multi-site hubs).
	Site string
	// State is the state file; certificates and the offline queue go
	// beside it.
	State string
	// CollectMethod is auto, ebpf, pcap, etw or off.
	CollectMethod string
	// PcapInterface is the interface of the pcap backend; empty = chosen
	// by the agent.
	PcapInterface string
	// LogFormat is "text" or "json"; LogLevel "debug", "info", "warn" or
	// "error".
	LogFormat string
	LogLevel  string
	// File is the YAML file the configuration was read from, if any.
	File string
	// Deprecated names the deprecated settings that were given (they are
	// ignored; the caller logs a warning for each).
	Deprecated []string
}

// DefaultAgentState is the state file's default path, in the working
// directory.
const DefaultAgentState = "netmon-agent.state.json"

// AgentCollectMethods are the accepted values of collect.method.
var AgentCollectMethods = []string{"auto", "ebpf", "pcap", "etw", "off"}

// DefaultAgent returns the defaults; Name is filled from the host name at
// load time.
func DefaultAgent() Agent {
	return Agent{State: DefaultAgentState, CollectMethod: "auto", LogFormat: "text", LogLevel: "info"}
}

// agentFlagKeys maps each agent flag to its configuration key.
var agentFlagKeys = map[string]string{
	"hub-url":        "hub.url",
	"hub-token":      "hub.token",
	"hub-ca":         "hub.ca",
	"name":           "name",
	"site":           "site",
	"state":          "state",
	"collect-method": "collect.method",
	"pcap-interface": "collect.pcap_interface",
	"pcap":           "collect.pcap",
	"config":         "config",
	"log-format":     "log_format",
	"log-level":      "log_level",
}

// agentKeys and agentBlocks are what an agent configuration file may hold.
var (
	agentKeys   = []string{"hub", "name", "site", "state", "collect", "log_format", "log_level"}
	agentBlocks = map[string][]string{
		"hub":     {"url", "token", "ca"},
		"collect": {"method", "pcap_interface", "pcap"},
	}
)

// AddAgentFlags declares the agent's flags on fs.
func AddAgentFlags(fs *pflag.FlagSet) {
	d := DefaultAgent()
	fs.String("hub-url", "", "hub address, e.g. https://netmon.example:8080 (YAML hub.url, env NETMON_HUB__URL)")
	fs.String("hub-token", "", "enroll token (static -enroll-token of the hub or an ent_ token); needed for the first enrollment and to re-enroll; prefer the YAML file or env, flags show in ps (YAML hub.token, env NETMON_HUB__TOKEN)")
	fs.String("enroll-token", "", "same as -hub-token")
	fs.String("hub-ca", "", "PEM file of the CA that signs the hub's certificate; without it the agent trusts the hub on first use and pins the CA the hub returns (YAML hub.ca, env NETMON_HUB__CA)")
	fs.String("name", "", "name of this machine on the hub (default: the host name) (YAML name, env NETMON_NAME)")
	fs.String("site", "", "site of this machine (YAML site, env NETMON_SITE)")
	fs.String("state", d.State, "state file (identity, pinned CA, counters); <state>.crt/.key/.ca and <state>.queue.jsonl go beside it (YAML state, env NETMON_STATE)")
	fs.String("collect-method", d.CollectMethod, "deep collection backend: auto, ebpf, pcap, etw or off; this build sends base telemetry only and reports attr_method off (YAML collect.method, env NETMON_COLLECT__METHOD)")
	fs.String("pcap-interface", "", "interface for the pcap backend; empty = the busiest physical one (YAML collect.pcap_interface, env NETMON_COLLECT__PCAP_INTERFACE)")
	fs.Bool("pcap", false, "deprecated and ignored: use -collect-method (YAML collect.pcap)")
	fs.String("config", "", "YAML configuration file with keys hub.url, hub.token, hub.ca, name, site, state, collect.method, collect.pcap_interface, log_format, log_level (env NETMON_CONFIG)")
	fs.String("log-format", d.LogFormat, "log format: text or json (env NETMON_LOG_FORMAT)")
	fs.String("log-level", d.LogLevel, "minimum log level: debug, info, warn or error (env NETMON_LOG_LEVEL)")
}

// LoadAgent merges fs (already parsed), the environment and the YAML file
// named by --config / NETMON_CONFIG, then validates. enrolled tells
// whether a state file already holds an identity; an empty enroll token
// is refused only when it does not.
func LoadAgent(fs *pflag.FlagSet, enrolled func(statePath string) (bool, error)) (Agent, error) {
	v := newViper()
	for name, key := range agentFlagKeys {
		if f := fs.Lookup(name); f != nil {
			if err := v.BindPFlag(key, f); err != nil {
				return Agent{}, fmt.Errorf("bind flag %s: %w", name, err)
			}
		}
	}
	c := DefaultAgent()
	var err error
	if c.File, err = getString(v, "config"); err != nil {
		return Agent{}, err
	}
	fileHasPcap := false
	if c.File != "" {
		if fileHasPcap, err = readAgentFile(v, c.File); err != nil {
			return Agent{}, err
		}
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"hub.url", &c.HubURL}, {"hub.token", &c.HubToken}, {"hub.ca", &c.HubCA},
		{"name", &c.Name}, {"site", &c.Site}, {"state", &c.State},
		{"collect.method", &c.CollectMethod}, {"collect.pcap_interface", &c.PcapInterface},
		{"log_format", &c.LogFormat}, {"log_level", &c.LogLevel},
	} {
		if *f.dst, err = getString(v, f.key); err != nil {
			return Agent{}, err
		}
	}
	if fl := fs.Lookup("enroll-token"); fl != nil && fl.Changed && !fs.Changed("hub-token") {
		c.HubToken = fl.Value.String()
	}
	c.HubURL, c.HubToken = strings.TrimSpace(c.HubURL), strings.TrimSpace(c.HubToken)
	if fs.Changed("pcap") || os.Getenv(EnvPrefix+"_COLLECT__PCAP") != "" || fileHasPcap {
		c.Deprecated = append(c.Deprecated, "collect.pcap (-pcap)")
	}
	if strings.TrimSpace(c.Name) == "" {
		if c.Name, err = os.Hostname(); err != nil || strings.TrimSpace(c.Name) == "" {
			return Agent{}, errors.New("name: the host name is unavailable; set -name")
		}
	}
	if err := c.validate(); err != nil {
		return Agent{}, err
	}
	if c.HubToken == "" {
		ok, err := enrolled(c.State)
		if err != nil {
			return Agent{}, err
		}
		if !ok {
			return Agent{}, fmt.Errorf("hub.token (flag -hub-token, env NETMON_HUB__TOKEN) is empty and the state file %s holds no identity yet: an enroll token is needed to enroll this agent", c.State)
		}
	}
	return c, nil
}

func (c Agent) validate() error {
	if c.HubURL == "" {
		return errors.New("hub.url (flag -hub-url, env NETMON_HUB__URL): required, e.g. https://netmon.example:8080")
	}
	u, err := url.Parse(c.HubURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("hub.url %q: want an absolute http(s) URL such as https://netmon.example:8080", c.HubURL)
	}
	if !containsKey(AgentCollectMethods, c.CollectMethod) {
		return fmt.Errorf("collect.method %q: want one of %s", c.CollectMethod, strings.Join(AgentCollectMethods, ", "))
	}
	if strings.TrimSpace(c.State) == "" {
		return errors.New("state: must not be empty")
	}
	if c.HubCA != "" {
		if _, err := os.Stat(c.HubCA); err != nil {
			return fmt.Errorf("hub.ca: %w", err)
		}
	}
	_, err = logging.New(nopWriter{}, c.LogFormat, c.LogLevel)
	return err
}

// readAgentFile checks the file's keys (unknown ones are refused, at the
// top level and inside the hub and collect blocks) and loads it into v.
// It reports whether the deprecated collect.pcap key is present.
func readAgentFile(v *viper.Viper, file string) (hasPcap bool, err error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return false, fmt.Errorf("read config file: %w", err)
	}
	var top map[string]any
	if err := yaml.Unmarshal(raw, &top); err != nil {
		return false, fmt.Errorf("config file %s: %w", file, err)
	}
	for k, val := range top {
		if !containsKey(agentKeys, k) {
			return false, fmt.Errorf("config file %s: unknown key %q (known keys: %s)", file, k, strings.Join(agentKeys, ", "))
		}
		sub, ok := agentBlocks[k]
		if !ok {
			continue
		}
		m, isMap := val.(map[string]any)
		if !isMap && val != nil {
			return false, fmt.Errorf("config file %s: %s must be a mapping (e.g. %s: {%s: ...})", file, k, k, sub[0])
		}
		for sk := range m {
			if !containsKey(sub, sk) {
				return false, fmt.Errorf("config file %s: unknown key %q in %s (known keys: %s)", file, sk, k, strings.Join(sub, ", "))
			}
		}
		if k == "collect" {
			_, hasPcap = m["pcap"]
		}
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(strings.NewReader(string(raw))); err != nil {
		return false, fmt.Errorf("config file %s: %w", file, err)
	}
	return hasPcap, nil
}
