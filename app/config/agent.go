package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"netmon/agentmode"
	"netmon/agentmode/collect"
	"netmon/app/logging"
)

// AgentConfig is the agent's configuration (spec 1, "Agent settings"):
// the agent component's own Config plus the process's logging. Nested
// YAML keys map to flags and variables like this:
//
//	hub.url                 -hub-url         NETMON_HUB__URL
//	hub.token               -hub-token       NETMON_HUB__TOKEN   (also -enroll-token)
//	hub.ca                  -hub-ca          NETMON_HUB__CA
//	collect.method          -collect-method  NETMON_COLLECT__METHOD
//	collect.pcap_interface  -pcap-interface  NETMON_COLLECT__PCAP_INTERFACE
//	name, site, state       -name, -site, -state   NETMON_NAME, NETMON_SITE, NETMON_STATE
type AgentConfig struct {
	// Agent is what the agent runs with (hub, identity, state, collection).
	Agent agentmode.Config
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

// DefaultAgentState is the state file's default path: the system state
// directory as root, the user's otherwise (agentmode.DefaultStatePath).
func DefaultAgentState() string { return agentmode.DefaultStatePath() }

// AgentCollectMethods are the accepted values of collect.method.
var AgentCollectMethods = collect.Methods

// DefaultAgentConfig returns the defaults; Agent.Name is filled from the
// host name at load time.
func DefaultAgentConfig() AgentConfig {
	return AgentConfig{Agent: agentmode.DefaultConfig(), LogFormat: "text", LogLevel: "info"}
}

// agentBindings binds every agent setting to its one field.
var agentBindings = []binding[AgentConfig]{
	{key: "config", flag: "config", field: "File", kind: str{},
		usage: "YAML configuration file with keys hub.url, hub.token, hub.ca, name, site, state, collect.method, collect.pcap_interface, log_format, log_level (env NETMON_CONFIG)",
		ptr:   func(c *AgentConfig) any { return &c.File }},
	{key: "hub.url", flag: "hub-url", field: "Agent.HubURL", kind: str{},
		usage: "hub address, e.g. https://netmon.example:8080 (YAML hub.url, env NETMON_HUB__URL)",
		ptr:   func(c *AgentConfig) any { return &c.Agent.HubURL }},
	{key: "hub.token", flag: "hub-token", field: "Agent.EnrollToken", kind: str{}, secret: true,
		usage: "enroll token (static -enroll-token of the hub or an ent_ token); needed for the first enrollment and to re-enroll; prefer the YAML file or env, flags show in ps (YAML hub.token, env NETMON_HUB__TOKEN)",
		ptr:   func(c *AgentConfig) any { return &c.Agent.EnrollToken }},
	{key: "hub.ca", flag: "hub-ca", field: "Agent.HubCAFile", kind: str{},
		usage: "PEM file of the CA that signs the hub's certificate; without it the agent trusts the hub on first use and pins the CA the hub returns (YAML hub.ca, env NETMON_HUB__CA)",
		ptr:   func(c *AgentConfig) any { return &c.Agent.HubCAFile }},
	{key: "name", flag: "name", field: "Agent.Name", kind: str{},
		usage: "name of this machine on the hub (default: the host name) (YAML name, env NETMON_NAME)",
		ptr:   func(c *AgentConfig) any { return &c.Agent.Name }},
	{key: "site", flag: "site", field: "Agent.Site", kind: str{},
		usage: "site of this machine (YAML site, env NETMON_SITE)",
		ptr:   func(c *AgentConfig) any { return &c.Agent.Site }},
	{key: "state", flag: "state", field: "Agent.StatePath", kind: str{},
		usage: "state file (identity, pinned CA, counters); <state>.crt/.key/.ca and <state>.queue.jsonl go beside it; default /var/lib/netmon/netmon-agent.state.json as root, $XDG_STATE_HOME/netmon/ (else ~/.local/state/netmon/) otherwise, never the working directory (YAML state, env NETMON_STATE)",
		ptr:   func(c *AgentConfig) any { return &c.Agent.StatePath }},
	{key: "collect.method", flag: "collect-method", field: "Agent.Collect.Method", kind: str{},
		usage: "deep collection backend: auto (Linux: ebpf then pcap; Windows: etw then pcap; macOS: pcap), ebpf, pcap, etw or off; this build runs pcap on Linux, and attr_note says why any other is not running (YAML collect.method, env NETMON_COLLECT__METHOD)",
		ptr:   func(c *AgentConfig) any { return &c.Agent.Collect.Method }},
	{key: "collect.pcap_interface", flag: "pcap-interface", field: "Agent.Collect.PcapInterface", kind: str{},
		usage: "interface for the pcap backend; empty = the busiest physical one (YAML collect.pcap_interface, env NETMON_COLLECT__PCAP_INTERFACE)",
		ptr:   func(c *AgentConfig) any { return &c.Agent.Collect.PcapInterface }},
	{key: "log_format", flag: "log-format", field: "LogFormat", kind: str{},
		usage: "log format: text or json (env NETMON_LOG_FORMAT)",
		ptr:   func(c *AgentConfig) any { return &c.LogFormat }},
	{key: "log_level", flag: "log-level", field: "LogLevel", kind: str{},
		usage: "minimum log level: debug, info, warn or error (env NETMON_LOG_LEVEL)",
		ptr:   func(c *AgentConfig) any { return &c.LogLevel }},
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
	declare(fs, agentBindings, DefaultAgentConfig())
	fs.String("enroll-token", "", "same as -hub-token")
	fs.Bool("pcap", false, "deprecated and ignored: use -collect-method (YAML collect.pcap)")
}

// LoadAgent merges fs (already parsed), the environment and the YAML file
// named by --config / NETMON_CONFIG, then validates. enrolled tells
// whether a state file already holds an identity; an empty enroll token
// is refused only when it does not.
func LoadAgent(fs *pflag.FlagSet, enrolled func(statePath string) (bool, error)) (AgentConfig, error) {
	c, _, err := LoadAgentSettings(fs, enrolled)
	return c, err
}

// LoadAgentSettings is LoadAgent that also returns every effective setting
// with its source, for `netmon config print agent`.
func LoadAgentSettings(fs *pflag.FlagSet, enrolled func(statePath string) (bool, error)) (AgentConfig, []Setting, error) {
	fileHasPcap := false
	l, err := newLoader(fs, func(v *viper.Viper, file string) (map[string]any, error) {
		top, hasPcap, err := readAgentFile(v, file)
		fileHasPcap = hasPcap
		return top, err
	})
	if err != nil {
		return AgentConfig{}, nil, err
	}
	c := DefaultAgentConfig()
	settings, err := apply(l, agentBindings, &c)
	if err != nil {
		return AgentConfig{}, nil, err
	}
	a := &c.Agent
	if fl := fs.Lookup("enroll-token"); fl != nil && fl.Changed && !fs.Changed("hub-token") {
		a.EnrollToken = fl.Value.String()
		for i := range settings {
			if settings[i].Key == "hub.token" {
				settings[i].Value, settings[i].Source = Redacted, Source{"flag", "--enroll-token"}
			}
		}
	}
	a.HubURL, a.EnrollToken = strings.TrimSpace(a.HubURL), strings.TrimSpace(a.EnrollToken)
	if fs.Changed("pcap") || os.Getenv(EnvPrefix+"_COLLECT__PCAP") != "" || fileHasPcap {
		c.Deprecated = append(c.Deprecated, "collect.pcap (-pcap)")
	}
	if strings.TrimSpace(a.Name) == "" {
		if a.Name, err = os.Hostname(); err != nil || strings.TrimSpace(a.Name) == "" {
			return AgentConfig{}, nil, errors.New("name: the host name is unavailable; set -name")
		}
		for i := range settings {
			if settings[i].Key == "name" {
				settings[i].Value, settings[i].Source = a.Name, Source{"default", "(the host name)"}
			}
		}
	}
	if err := c.validate(); err != nil {
		return AgentConfig{}, nil, err
	}
	if a.EnrollToken == "" {
		ok, err := enrolled(a.StatePath)
		if err != nil {
			return AgentConfig{}, nil, err
		}
		if !ok {
			return AgentConfig{}, nil, fmt.Errorf("hub.token (flag -hub-token, env NETMON_HUB__TOKEN) is empty and the state file %s holds no identity yet: an enroll token is needed to enroll this agent", a.StatePath)
		}
	}
	return c, settings, nil
}

func (c AgentConfig) validate() error {
	a := c.Agent
	if err := agentmode.ValidateHubURL(a.HubURL); err != nil {
		return err
	}
	if !containsKey(AgentCollectMethods, a.Collect.Method) {
		return fmt.Errorf("collect.method %q: want one of %s", a.Collect.Method, strings.Join(AgentCollectMethods, ", "))
	}
	if strings.TrimSpace(a.StatePath) == "" {
		return errors.New("state: must not be empty")
	}
	if a.HubCAFile != "" {
		if _, err := os.Stat(a.HubCAFile); err != nil {
			return fmt.Errorf("hub.ca: %w", err)
		}
	}
	_, err := logging.New(nopWriter{}, c.LogFormat, c.LogLevel)
	return err
}

// readAgentFile checks the file's keys (unknown ones are refused, at the
// top level and inside the hub and collect blocks) and loads it into v.
// It reports whether the deprecated collect.pcap key is present.
func readAgentFile(v *viper.Viper, file string) (top map[string]any, hasPcap bool, err error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, false, fmt.Errorf("read config file: %w", err)
	}
	if err := yamlUnmarshal(raw, &top); err != nil {
		return nil, false, fmt.Errorf("config file %s: %w", file, err)
	}
	for k, val := range top {
		if !containsKey(agentKeys, k) {
			return nil, false, fmt.Errorf("config file %s: unknown key %q (known keys: %s)", file, k, strings.Join(agentKeys, ", "))
		}
		sub, ok := agentBlocks[k]
		if !ok {
			continue
		}
		m, isMap := val.(map[string]any)
		if !isMap && val != nil {
			return nil, false, fmt.Errorf("config file %s: %s must be a mapping (e.g. %s: {%s: ...})", file, k, k, sub[0])
		}
		for sk := range m {
			if !containsKey(sub, sk) {
				return nil, false, fmt.Errorf("config file %s: unknown key %q in %s (known keys: %s)", file, sk, k, strings.Join(sub, ", "))
			}
		}
		if k == "collect" {
			_, hasPcap = m["pcap"]
		}
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(strings.NewReader(string(raw))); err != nil {
		return nil, false, fmt.Errorf("config file %s: %w", file, err)
	}
	return top, hasPcap, nil
}
