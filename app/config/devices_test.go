package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/collectors/devices"
)

// TestDevicesBlock: the device component's Config is reached from YAML
// under "devices" (its drivers' tuning prefixed snmp_ and firewall_, as
// the block rows derive them), -poller and -devpoll-concurrency set its first
// fields, and what is not set keeps the component's default.
func TestDevicesBlock(t *testing.T) {
	file := writeFile(t, `poller: false
devpoll_concurrency: 12
devices:
  per_host: 2
  default_poll_seconds: 120
  refresh: 45s
  max_backoff: 10m
  snmp_timeout: 1500ms
  snmp_retries: 3
  snmp_device_timeout: 20s
  snmp_bulk_varbinds: 32
  snmp_topology_every: 15m
  snmp_max_arp: 512
  firewall_spacing: 300ms
  firewall_timeout: 15s
  firewall_max_body: 4194304
  firewall_max_records: 1000
  firewall_max_backoff: 1h
`)
	got, err := load(t, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	want := devices.DefaultConfig()
	want.Enabled, want.Concurrency, want.PerHost, want.DefaultPollSeconds = false, 12, 2, 120
	want.Refresh, want.MaxBackoff = 45*time.Second, 10*time.Minute
	want.SNMP.Timeout, want.SNMP.Retries, want.SNMP.DeviceTimeout = 1500*time.Millisecond, 3, 20*time.Second
	want.SNMP.BulkVarbinds, want.SNMP.TopologyEvery, want.SNMP.MaxARP = 32, 15*time.Minute, 512
	want.Firewall.Spacing, want.Firewall.Timeout, want.Firewall.MaxBody = 300*time.Millisecond, 15*time.Second, 4<<20
	want.Firewall.MaxRecords, want.Firewall.MaxBackoff = 1000, time.Hour
	if diff := cmp.Diff(got.Devices, want); diff != "" {
		t.Errorf("devices (-got, +want):\n%s", diff)
	}
	def, err := load(t)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(def.Devices, devices.DefaultConfig()); diff != "" {
		t.Errorf("no file: devices (-got, +want):\n%s", diff)
	}
}
