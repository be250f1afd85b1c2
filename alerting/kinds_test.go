package alerting_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/alerting"
	"netmon/alerting/siem"
)

func TestKinds(t *testing.T) {
	// Spec 6.3's kinds, in its order.
	want := []string{"bw", "port", "proc", "target", "anomaly", "ioc", "iface_util", "vpn_down", "sdwan_sla_breach", "high_sessions", "sla_breach", "time_drift"}
	if diff := cmp.Diff(alerting.Kinds(), want); diff != "" {
		t.Errorf("Kinds (-got, +want):\n%s", diff)
	}
	for _, k := range alerting.Kinds() {
		if siem.Label(k) == k {
			t.Errorf("kind %s has no SIEM label", k)
		}
	}
}
