package config

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Capture configures the hub-local capture, recordings and GeoIP.
type Capture struct {
	// Enabled is -capture: the hub-local capture.
	Enabled bool
	// RecordDir is where PCAP recordings go (-record-dir).
	RecordDir string
	// RecordMaxMB is the size of a recording file before rotation.
	RecordMaxMB int
	// GeoIPDir holds country and ASN .mmdb files (-geoip-dir).
	GeoIPDir string
	// IPOnlineLookup resolves public addresses online when no .mmdb exists.
	IPOnlineLookup bool
	// IPOnlineURL is the batch lookup service (YAML/env only).
	IPOnlineURL string
}

// DefaultCapture returns the defaults of spec section 1.
func DefaultCapture() Capture {
	return Capture{Enabled: true, RecordDir: "captures", RecordMaxMB: 100, GeoIPDir: "geoip", IPOnlineLookup: true}
}

var captureKeys = []string{"capture", "record_dir", "record_max_mb", "geoip_dir", "ip_online_lookup", "ip_online_url"}

func addCaptureFlags(fs *pflag.FlagSet) {
	d := DefaultCapture()
	fs.Bool("capture", d.Enabled, "hub-local packet capture; false disables it entirely (env NETMON_CAPTURE)")
	fs.String("record-dir", d.RecordDir, "directory of PCAP recordings (env NETMON_RECORD_DIR)")
	fs.Int("record-max-mb", d.RecordMaxMB, "size in MiB of a recording file before it rotates to a new one (env NETMON_RECORD_MAX_MB)")
	fs.String("geoip-dir", d.GeoIPDir, "directory of country and ASN .mmdb databases, reloaded when they change (env NETMON_GEOIP_DIR); make geoip fills it offline")
	fs.Bool("ip-online-lookup", d.IPOnlineLookup, "when no .mmdb exists, look public addresses up online in batches (never private ones) (env NETMON_IP_ONLINE_LOOKUP)")
}

func loadCapture(v *viper.Viper, c *Capture) error {
	*c = DefaultCapture()
	var err error
	if c.Enabled, err = getBool(v, "capture"); err != nil {
		return err
	}
	if c.RecordDir, err = getString(v, "record_dir"); err != nil {
		return err
	}
	if c.RecordMaxMB, err = getInt(v, "record_max_mb"); err != nil {
		return err
	}
	if c.GeoIPDir, err = getString(v, "geoip_dir"); err != nil {
		return err
	}
	if c.IPOnlineLookup, err = getBool(v, "ip_online_lookup"); err != nil {
		return err
	}
	if c.IPOnlineURL, err = getString(v, "ip_online_url"); err != nil {
		return err
	}
	return nil
}

func (c Capture) validate() error {
	switch {
	case strings.TrimSpace(c.RecordDir) == "":
		return fmt.Errorf("record-dir: must not be empty")
	case c.RecordMaxMB < 1 || c.RecordMaxMB > 1<<20:
		return fmt.Errorf("record-max-mb %d: must be between 1 and 1048576", c.RecordMaxMB)
	case c.IPOnlineURL != "" && !strings.HasPrefix(c.IPOnlineURL, "http://") && !strings.HasPrefix(c.IPOnlineURL, "https://"):
		return fmt.Errorf("ip_online_url %q: want an http(s) URL", c.IPOnlineURL)
	}
	return nil
}
