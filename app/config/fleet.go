package config

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Fleet configures agent enrollment, telemetry and the hub's TLS (spec 1).
type Fleet struct {
	// EnrollToken is the static enrollment secret (-enroll-token). Empty
	// means the hub makes a random one at start and logs it once; a value
	// of only whitespace is refused.
	EnrollToken string
	// AgentArchiveDays deletes agents offline this many days with all their
	// data (0 = never).
	AgentArchiveDays int
	// AgentPcap is the fleet policy for deep collection and raw PCAP, sent
	// to agents in the hello.
	AgentPcap bool
	// AgentInterval is the telemetry interval in seconds agents are told to use.
	AgentInterval int
	// TLS serves HTTPS and agent mTLS with the hub's own CA.
	TLS bool
	// TLSDir holds the CA and the generated server certificate.
	TLSDir string
	// TLSHosts are the names and addresses of the generated server
	// certificate (default: localhost, 127.0.0.1, ::1 and the host name).
	TLSHosts []string
	// TLSCert and TLSKey are an operator's server certificate and key,
	// used instead of the generated one (both or neither).
	TLSCert, TLSKey string
}

// DefaultFleet: random static token, 30 days archive, deep collection on,
// 30 s telemetry, TLS off with its files in ./tls.
func DefaultFleet() Fleet {
	return Fleet{AgentArchiveDays: 30, AgentPcap: true, AgentInterval: 30, TLSDir: "tls"}
}

var fleetKeys = []string{"enroll_token", "agent_archive_days", "agent_pcap", "agent_interval", "tls", "tls_dir", "tls_hosts", "tls_cert", "tls_key"}

func addFleetFlags(fs *pflag.FlagSet) {
	d := DefaultFleet()
	fs.String("enroll-token", "", "static agent enrollment secret (X-Enroll-Token); empty = a random one, logged once at start (env NETMON_ENROLL_TOKEN)")
	fs.Int("agent-archive-days", d.AgentArchiveDays, "delete agents offline this many days, with all their data; 0 = never (env NETMON_AGENT_ARCHIVE_DAYS)")
	fs.Bool("agent-pcap", d.AgentPcap, "fleet policy for agent deep collection and raw PCAP; false disables it fleet-wide (env NETMON_AGENT_PCAP)")
	fs.Int("agent-interval", d.AgentInterval, "telemetry interval in seconds that agents are told to use, 1-3600 (env NETMON_AGENT_INTERVAL)")
	fs.Bool("tls", d.TLS, "serve HTTPS and agent mTLS; the hub creates its own CA in -tls-dir (env NETMON_TLS)")
	fs.String("tls-dir", d.TLSDir, "directory of the hub CA and generated server certificate (env NETMON_TLS_DIR)")
	fs.StringSlice("tls-hosts", nil, "host names and IPs of the generated server certificate, comma-separated (default localhost, 127.0.0.1, ::1 and the host name; env NETMON_TLS_HOSTS)")
	fs.String("tls-cert", "", "operator's server certificate (PEM) instead of the generated one; needs -tls-key (env NETMON_TLS_CERT)")
	fs.String("tls-key", "", "private key (PEM) of -tls-cert (env NETMON_TLS_KEY)")
}

func loadFleet(v *viper.Viper, f *Fleet) error {
	var err error
	if f.EnrollToken, err = getString(v, "enroll_token"); err != nil {
		return err
	}
	if f.AgentArchiveDays, err = getInt(v, "agent_archive_days"); err != nil {
		return err
	}
	if f.AgentPcap, err = getBool(v, "agent_pcap"); err != nil {
		return err
	}
	if f.AgentInterval, err = getInt(v, "agent_interval"); err != nil {
		return err
	}
	if f.TLS, err = getBool(v, "tls"); err != nil {
		return err
	}
	if f.TLSDir, err = getString(v, "tls_dir"); err != nil {
		return err
	}
	if f.TLSHosts, err = getStrings(v, "tls_hosts"); err != nil {
		return err
	}
	if f.TLSCert, err = getString(v, "tls_cert"); err != nil {
		return err
	}
	f.TLSKey, err = getString(v, "tls_key")
	return err
}

func (f Fleet) validate() error {
	switch {
	case f.EnrollToken != "" && strings.TrimSpace(f.EnrollToken) == "":
		return fmt.Errorf("enroll-token: must not be only whitespace (leave it unset for a random token)")
	case f.EnrollToken != "" && len(strings.TrimSpace(f.EnrollToken)) < 16:
		return fmt.Errorf("enroll-token: must be at least 16 characters (leave it unset for a random token)")
	case strings.HasPrefix(strings.TrimSpace(f.EnrollToken), "ent_"):
		return fmt.Errorf("enroll-token: must not start with ent_ (that prefix marks database enroll tokens)")
	case f.AgentArchiveDays < 0:
		return fmt.Errorf("agent-archive-days %d: must be 0 (never) or more", f.AgentArchiveDays)
	case f.AgentInterval < 1 || f.AgentInterval > 3600:
		return fmt.Errorf("agent-interval %d: must be between 1 and 3600 seconds", f.AgentInterval)
	case (f.TLSCert == "") != (f.TLSKey == ""):
		return fmt.Errorf("tls-cert and tls-key: give both or neither")
	case f.TLS && strings.TrimSpace(f.TLSDir) == "":
		return fmt.Errorf("tls-dir: must not be empty with -tls")
	}
	return nil
}
