package agentmode

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"netmon/agentmode/collect"
	"netmon/agentmode/service"
	"netmon/agentmode/state"
	"netmon/app/version"
)

// DefaultStateFile is the state file's name (spec 1:
// <service>-agent.state.json); DefaultStatePath says in which directory.
const DefaultStateFile = "netmon-agent.state.json"

// DefaultStatePath is the state file used when -state is not given: in the
// system state directory when running as root (/var/lib/netmon on Linux,
// where an installed service keeps it too), otherwise in the user's
// ($XDG_STATE_HOME/netmon, else ~/.local/state/netmon; the platform's
// per-user application directory on macOS and Windows). Never the working
// directory: an agent started from a source checkout once left its state
// and queue among the project's files.
func DefaultStatePath() string {
	return statePathFor(os.Geteuid(), os.Getenv, os.UserHomeDir)
}

// statePathFor is DefaultStatePath with the process's facts passed in, for
// the table test.
func statePathFor(euid int, getenv func(string) string, home func() (string, error)) string {
	if euid == 0 {
		return filepath.Join(DefaultServiceStateDir(), DefaultStateFile)
	}
	if dir := service.UserStateDir(getenv, home); dir != "" {
		return filepath.Join(dir, DefaultStateFile)
	}
	// No home directory at all (a stripped-down service account): the
	// working directory is the only place left.
	return DefaultStateFile
}

// Config is what the agent needs to run; app/config builds it from flags,
// environment and file.
type Config struct {
	// HubURL is the hub's base address, http:// or https://.
	HubURL string
	// EnrollToken is hub.token: the enroll secret sent in X-Enroll-Token
	// at the first hello and at re-enrollment. It may be empty once the
	// state file holds an identity, at the price of no re-enrollment.
	EnrollToken string
	// HubCAFile is -hub-ca: a PEM file of the CA the hub's certificate
	// must chain to (instead of trusting the hub on first use).
	HubCAFile string
	// Name and Site describe this machine to the hub.
	Name string
	Site string
	// StatePath is the state file; certificates and the offline queue are
	// kept beside it.
	StatePath string
	// Collect selects the attribution backend.
	Collect collect.Config
	// Version is reported in hello and telemetry.
	Version string
}

// DefaultConfig returns the defaults; Name is left to the caller (the
// host name).
func DefaultConfig() Config {
	return Config{StatePath: DefaultStatePath(), Collect: collect.DefaultConfig(), Version: version.Version}
}

// Validate checks the configuration and names the offending setting.
func (c Config) Validate() error {
	if err := ValidateHubURL(c.HubURL); err != nil {
		return err
	}
	if strings.TrimSpace(c.StatePath) == "" {
		return errors.New("state: must not be empty")
	}
	if !collect.ValidMethod(c.Collect.Method) {
		return fmt.Errorf("collect.method %q: want one of %s", c.Collect.Method, strings.Join(collect.Methods, ", "))
	}
	if strings.TrimSpace(c.Name) == "" {
		return errors.New("name: must not be empty")
	}
	return nil
}

// ValidateHubURL checks hub.url: an absolute http(s) URL without query.
func ValidateHubURL(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("hub.url (flag -hub-url, env NETMON_HUB__URL): required, e.g. https://netmon.example:8080")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("hub.url %q: want an absolute http(s) URL such as https://netmon.example:8080", s)
	}
	return nil
}

// Enrolled reports whether the state file at path holds an identity the
// hub issued, which lets the agent start without an enroll token. A
// missing file is not enrolled; a corrupt one is an error.
func Enrolled(path string) (bool, error) {
	s, err := state.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return s.Enrolled(), nil
}
