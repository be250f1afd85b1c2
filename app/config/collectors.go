package config

import (
	"fmt"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Collectors configures the flow and syslog listeners and the ingest queue.
type Collectors struct {
	// FlowPort receives NetFlow v5/v9, IPFIX and sFlow v5 (0 = off).
	FlowPort int
	// SFlowPort receives sFlow v5 only (0 = none).
	SFlowPort int
	// SyslogPort receives RFC 3164/5424 syslog over UDP (0 = off).
	SyslogPort int
	// QueueWorkers write ingest batches to the database in parallel.
	QueueWorkers int
}

// DefaultCollectors: listeners off, 4 queue workers.
func DefaultCollectors() Collectors { return Collectors{QueueWorkers: 4} }

var collectorKeys = []string{"flow_port", "sflow_port", "syslog_port", "queue_workers"}

func addCollectorFlags(fs *pflag.FlagSet) {
	fs.Int("flow-port", 0, "UDP port for NetFlow v5/v9, IPFIX and sFlow v5 together, e.g. 2055; 0 = off (env NETMON_FLOW_PORT)")
	fs.Int("sflow-port", 0, "separate UDP port for sFlow v5, e.g. 6343; 0 = none (env NETMON_SFLOW_PORT)")
	fs.Int("syslog-port", 0, "UDP port for syslog (RFC 3164, also 5424), e.g. 5514; 0 = off (env NETMON_SYSLOG_PORT)")
	fs.Int("queue-workers", DefaultCollectors().QueueWorkers, "parallel writers of the ingest queue (env NETMON_QUEUE_WORKERS)")
}

func loadCollectors(v *viper.Viper, c *Collectors) error {
	var err error
	for _, f := range []struct {
		key string
		dst *int
	}{{"flow_port", &c.FlowPort}, {"sflow_port", &c.SFlowPort}, {"syslog_port", &c.SyslogPort}, {"queue_workers", &c.QueueWorkers}} {
		if *f.dst, err = getInt(v, f.key); err != nil {
			return err
		}
	}
	return nil
}

func (c Collectors) validate() error {
	for name, p := range map[string]int{"flow-port": c.FlowPort, "sflow-port": c.SFlowPort, "syslog-port": c.SyslogPort} {
		if p < 0 || p > 65535 {
			return fmt.Errorf("%s %d: must be between 1 and 65535 (0 = off)", name, p)
		}
	}
	if c.FlowPort != 0 && c.FlowPort == c.SFlowPort {
		return fmt.Errorf("sflow-port %d: the flow port already receives sFlow; use another port or none", c.SFlowPort)
	}
	if c.QueueWorkers < 1 || c.QueueWorkers > 256 {
		return fmt.Errorf("queue-workers %d: must be between 1 and 256", c.QueueWorkers)
	}
	return nil
}
