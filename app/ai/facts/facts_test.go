package facts_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/app/ai"
	"netmon/app/ai/facts"
	"netmon/app/ai/prompt"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// line renders a fact as the tests compare it: priority, source, text,
// then the data fields.
func line(f prompt.Fact) string {
	var d []string
	for _, x := range f.Data {
		d = append(d, x.Name+"="+x.Value)
	}
	return fmt.Sprintf("%d [%s] %s | %s", f.Priority, f.Source, f.Text, strings.Join(d, "; "))
}

func sources(fs []prompt.Fact) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(out, f.Source) {
			out = append(out, f.Source)
		}
	}
	return out
}

var agentSources = []string{"agent:summary", "agent:traffic", "agent:rates", "agent:interfaces", "agent:connections", "agent:alerts:summary",
	"agent:alerts:open", "agent:incidents", "changes:new_processes", "changes:new_destinations", "changes:new_domains", "processes:top", "dns:top_domains", "l7:top_hosts"}

// TestFacts: each scope answers its sources, in order, and the facts a
// user would check, exactly (ids are the seeded ones: {web} is web-01's).
func TestFacts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := seed(t, db)
		b := builder(db)
		ids := strings.NewReplacer("{web}", itoa(s.web), "{db}", itoa(s.db), "{pay}", itoa(s.pay), "{fw}", itoa(s.fw), "{core}", itoa(s.coreSW),
			"{ap}", itoa(s.ap), "{south}", itoa(s.swSouth), "{port}", itoa(s.portAlert), "{anom}", itoa(s.anomalyAlert), "{vpn}", itoa(s.vpnDown),
			"{southalert}", itoa(s.southAlert), "{inc}", itoa(s.incident), "{southinc}", itoa(s.southIncident))
		for _, tc := range []struct {
			name    string
			scope   ai.Scope
			sources []string
			lines   []string
		}{
			{"fleet", ai.Scope{Kind: ai.ScopeFleet},
				[]string{"agents:summary", "agents:offline", "capture:traffic", "flows:top_talkers", "processes:top", "dns:top_domains", "l7:top_hosts",
					"alerts:summary", "alerts:open", "incidents:open", "devices:health", "devices:unreachable", "devices:interfaces", "agents:top_talkers"},
				[]string{
					"82 [capture:traffic] The hub's own capture over the last hour (120 s captured): 9.00 MB in, 3.00 MB out, 12.0 MB in all; +200% against the baseline of 4.00 MB (mean of the same hour on 1 of the previous 7 days). | ",
					"100 [agents:summary] Fleet (every site) at 2027-01-15 08:00 UTC: 3 agents enrolled, 2 online (telemetry within 90 s), 1 offline (0 never sent telemetry); process attribution is off on 1. | ",
					"80 [agents:offline] Offline agent {db}: last telemetry 2027-01-15 07:00 UTC. | agent=db-01; site=north",
					// pay-01: 100 kB/s each way held 1200 s three times; web-01: 1000 and 500 B/s, half of it yesterday.
					"86 [agents:top_talkers] Agent {pay}, rank 1 by interface bytes over the last hour: 360 MB in, 360 MB out, 720 MB in all; +0% against the baseline of 720 MB (mean of the same hour on 1 of the previous 7 days). | agent=pay-01; site=south",
					"84 [agents:top_talkers] Agent {web}, rank 2 by interface bytes over the last hour: 3.60 MB in, 1.80 MB out, 5.40 MB in all; +100% against the baseline of 2.70 MB (mean of the same hour on 1 of the previous 7 days). | agent=web-01; site=north",
					"70 [flows:top_talkers] Address rank 3 by flow bytes (sent and received, from the exporters) over the last hour: 1.00 MB; +100% against the baseline of 500 kB (mean of the same hour on 1 of the previous 7 days). | address=10.1.0.5",
					"70 [processes:top] Process rank 1 by bytes over the last hour (every site): 90.0 kB in, 45.0 kB out, on 1 agents. | process=payd",
					"62 [dns:top_domains] DNS name rank 2 by queries over the last hour (every site): 4 queries, 4 responses, from 1 agents. | domain=pool.minexmr.example; process=xmrig",
					"60 [l7:top_hosts] TLS SNI / HTTP Host rank 2 by bytes over the last hour (every site): 40.0 kB, 3 connections seen, from 1 agents. | host=pool.minexmr.example; kind=tls; process=xmrig",
					"98 [alerts:summary] Open alert events (firing or acknowledged) by kind, severity and state: 4 in all; port severity 9 firing: 2 events (4 firings); vpn_down severity 8 firing: 1 events (1 firings); anomaly severity 6 ack: 1 events (2 firings). | ",
					"88 [alerts:open] Alert event {port} on agent {web}: kind port, severity 9, state firing, fired 3 times, first 2027-01-15 07:45 UTC, last 2027-01-15 07:55 UTC, incident {inc}. | agent=web-01; key={web}|203.0.113.50:4444; message=web-01 connected to 203.0.113.50:4444 (gateway MAC 00:11:22:33:44:55); process=nc; site=north",
					"94 [incidents:open] Open incidents (open, acknowledged or investigating): 2 in all; the riskiest follow. | ",
					"93 [incidents:open] Incident {southinc}: correlation rule 2, agent {pay}, state open, severity 9, risk 80/100, opened 2027-01-15 07:45 UTC, updated 2027-01-15 07:55 UTC. | title=pay-01: suspicious port; agent=pay-01; site=south",
					"84 [devices:health] Network devices: 4 in all; 1 whose last poll failed, 0 not polled within 3 poll intervals, 0 disabled, 0 unmanaged (topology only). | ",
					"83 [devices:unreachable] Device {ap}: its last poll failed; last poll 2027-01-15 07:59 UTC, polled every 60 s. | device=ap-03; kind=switch; address=10.1.0.33; last_error=timeout contacting 10.1.0.33; site=north",
					"58 [devices:interfaces] Interface rank 2 by utilisation in the devices' last polls: device {core} ifIndex 1, rx 91.0%, tx 10.0% (910 Mbit/s in, 100 Mbit/s out), speed 1.00 Gbit/s, oper up, polled 2027-01-15 07:59 UTC. | device=core-sw1; interface=Gi0/1; alias=uplink to fw-01",
				}},
			{"fleet of site north", ai.Scope{Kind: ai.ScopeFleet, Site: "north"},
				[]string{"agents:summary", "agents:offline", "flows:top_talkers", "processes:top", "dns:top_domains", "l7:top_hosts",
					"alerts:summary", "alerts:open", "incidents:open", "devices:health", "devices:unreachable", "devices:interfaces", "agents:top_talkers"},
				[]string{
					"100 [agents:summary] Fleet of the reader's site at 2027-01-15 08:00 UTC: 2 agents enrolled, 1 online (telemetry within 90 s), 1 offline (0 never sent telemetry); process attribution is off on 1. | site=north",
					"86 [agents:top_talkers] Agent {web}, rank 1 by interface bytes over the last hour: 3.60 MB in, 1.80 MB out, 5.40 MB in all; +100% against the baseline of 2.70 MB (mean of the same hour on 1 of the previous 7 days). | agent=web-01",
					"70 [processes:top] Process rank 1 by bytes over the last hour (the reader's site): 40.0 kB in, 20.0 kB out, on 1 agents. | process=xmrig",
					"98 [alerts:summary] Open alert events (firing or acknowledged) by kind, severity and state: 3 in all; port severity 9 firing: 1 events (3 firings); vpn_down severity 8 firing: 1 events (1 firings); anomaly severity 6 ack: 1 events (2 firings). | ",
					"88 [alerts:open] Alert event {vpn} on no agent (the hub or a device): kind vpn_down, severity 8, state firing, fired 1 times, first 2027-01-15 07:58 UTC, last 2027-01-15 07:58 UTC. | key={fw}|root/hq-tunnel; message=IPsec tunnel hq-tunnel (vdom root) of fw-01 (device {fw}) is down",
					"94 [incidents:open] Open incidents (open, acknowledged or investigating): 1 in all; the riskiest follow. | ",
					"60 [devices:interfaces] Interface rank 1 by utilisation in the devices' last polls: device {core} ifIndex 1, rx 91.0%, tx 10.0% (910 Mbit/s in, 100 Mbit/s out), speed 1.00 Gbit/s, oper up, polled 2027-01-15 07:59 UTC. | device=core-sw1; interface=Gi0/1; alias=uplink to fw-01",
				}},
			{"agent", ai.Scope{Kind: ai.ScopeAgent, Ref: itoa(s.web)}, agentSources,
				[]string{
					"100 [agent:summary] Agent {web}: online, last telemetry 2027-01-15 07:59 UTC, enrolled 2026-12-16 08:00 UTC, 3 connections in its last telemetry, process attribution ebpf, 0 telemetry batches dropped by the agent. | agent=web-01; site=north; version=1.4.0; os=linux; address=10.1.0.5",
					"97 [agent:traffic] Interface bytes of agent {web} over the last hour: 3.60 MB in, 1.80 MB out, 5.40 MB in all; +100% against the baseline of 2.70 MB (mean of the same hour on 1 of the previous 7 days). | agent=web-01; site=north",
					"96 [agent:rates] Interface rates of agent {web} over the last hour (3 samples): mean 8.00 kbit/s in, 4.00 kbit/s out; peak 8.00 kbit/s in, 4.00 kbit/s out; last sample 2027-01-15 07:50 UTC: 8.00 kbit/s in, 4.00 kbit/s out, 12 packets/s. | ",
					"60 [agent:interfaces] Interface of agent {web} in its last telemetry: 8.00 kbit/s received, 4.00 kbit/s sent, 12 packets/s, link speed 1.00 Gbit/s. | interface=eth0",
					"90 [agent:connections] Connections of agent {web} in its last telemetry: 3 in all, 2 distinct remote ends; counts by state and process, then the most frequent remote ends (protocol, address, process: count). | states=ESTABLISHED 2, LISTEN 1; processes=sshd 2, curl 1; remote 1=tcp 10.1.0.77:60000 by sshd: 1; remote 2=tcp 203.0.113.50:443 by curl: 1",
					"94 [agent:alerts:summary] Open alert events (firing or acknowledged) by kind, severity and state: 2 in all; port severity 9 firing: 1 events (3 firings); anomaly severity 6 ack: 1 events (2 firings). | ",
					"91 [agent:incidents] Incident {inc}: correlation rule 2, agent {web}, state open, severity 9, risk 72/100, opened 2027-01-15 07:45 UTC, updated 2027-01-15 07:55 UTC. | title=web-01: suspicious port and traffic anomaly; agent=web-01; site=north",
					// curl ran 3 days ago too: not new.
					"86 [changes:new_processes] New processes of agent {web} in the last 24 hours, not reported in the 6 days before (as far as kept), the busiest first with first time and bytes since. | 1=xmrig (first 2027-01-15 07:40 UTC, 60.0 kB)",
					"85 [changes:new_destinations] New destinations (process, protocol, address, port) of agent {web} in the last 24 hours, not reported in the 6 days before (as far as kept), the busiest first with first time and bytes since. | 1=xmrig tcp 203.0.113.50 443 (first 2027-01-15 07:40 UTC, 40.0 kB)",
					"84 [changes:new_domains] New DNS names of agent {web} in the last 24 hours, not reported in the 6 days before (as far as kept), the busiest first with first time and queries since. | 1=pool.minexmr.example (first 2027-01-15 07:40 UTC, 4 queries)",
					"80 [processes:top] Process rank 2 by bytes over the last hour (agent {web}): 2.00 kB in, 1.00 kB out, on 1 agents. | process=curl",
				}},
			{"incident", ai.Scope{Kind: ai.ScopeIncident, Ref: itoa(s.incident)}, append([]string{"incident:summary", "incident:events"}, agentSources...),
				[]string{
					"100 [incident:summary] Incident {inc}: correlation rule 2, agent {web}, state open, severity 9, risk 72/100, opened 2027-01-15 07:45 UTC, updated 2027-01-15 07:55 UTC. | title=web-01: suspicious port and traffic anomaly; agent=web-01; site=north",
					"97 [incident:events] Incident {inc} has 2 member alert events; the first 2 follow, oldest first. | ",
					"96 [incident:events] Alert event {anom} on agent {web}: kind anomaly, severity 6, state ack, fired 2 times, first 2027-01-15 07:40 UTC, last 2027-01-15 07:50 UTC, incident {inc}. | agent=web-01; key={web}|in; message=agent {web}: in 8.0 kbit/s, z 4.1 against 2.0 kbit/s; site=north",
					"95 [incident:events] Alert event {port} on agent {web}: kind port, severity 9, state firing, fired 3 times, first 2027-01-15 07:45 UTC, last 2027-01-15 07:55 UTC, incident {inc}. | agent=web-01; key={web}|203.0.113.50:4444; message=web-01 connected to 203.0.113.50:4444 (gateway MAC 00:11:22:33:44:55); process=nc; site=north",
					"60 [agent:summary] Agent {web}: online, last telemetry 2027-01-15 07:59 UTC, enrolled 2026-12-16 08:00 UTC, 3 connections in its last telemetry, process attribution ebpf, 0 telemetry batches dropped by the agent. | agent=web-01; site=north; version=1.4.0; os=linux; address=10.1.0.5",
				}},
			{"anomaly", ai.Scope{Kind: ai.ScopeAnomaly, Ref: itoa(s.anomalyAlert)}, append([]string{"anomaly:event", "anomaly:series"}, agentSources...),
				[]string{
					"100 [anomaly:event] Alert event {anom} on agent {web}: kind anomaly, severity 6, state ack, fired 2 times, first 2027-01-15 07:40 UTC, last 2027-01-15 07:50 UTC, incident {inc}. | agent=web-01; key={web}|in; message=agent {web}: in 8.0 kbit/s, z 4.1 against 2.0 kbit/s; site=north",
					// 30 minutes before the first firing to now (30 minutes after the last is later).
					"96 [anomaly:series] Series of alert event {anom}: interface traffic (in / out) of agent {web}, mean per 5 minutes from 2027-01-15 07:10 UTC to 2027-01-15 08:00 UTC (first firing 2027-01-15 07:40 UTC, last 2027-01-15 07:50 UTC); buckets without samples are left out: 07:10 8.00 kbit/s / 4.00 kbit/s; 07:30 8.00 kbit/s / 4.00 kbit/s; 07:50 8.00 kbit/s / 4.00 kbit/s | ",
					"57 [agent:traffic] Interface bytes of agent {web} over the last hour: 3.60 MB in, 1.80 MB out, 5.40 MB in all; +100% against the baseline of 2.70 MB (mean of the same hour on 1 of the previous 7 days). | agent=web-01; site=north",
				}},
			{"port alert: no series", ai.Scope{Kind: ai.ScopeAnomaly, Ref: itoa(s.portAlert)}, append([]string{"anomaly:event"}, agentSources...), nil},
			{"firewall device", ai.Scope{Kind: ai.ScopeDevice, Ref: itoa(s.fw)},
				[]string{"device:status", "device:alerts:summary", "device:alerts:open", "device:interfaces", "device:resources", "device:vpn", "device:vpn_users", "device:sdwan"},
				[]string{
					"100 [device:status] Device {fw}, polled by the firewall REST API every 60 s: its last poll succeeded; last poll 2027-01-15 07:59 UTC. | device=fw-01; kind=switch; site=north; address=10.1.0.254; sys_name=fw-01; vendor=fwvendor; api_version=v7.4.3",
					"93 [device:alerts:open] Alert event {vpn} on no agent (the hub or a device): kind vpn_down, severity 8, state firing, fired 1 times, first 2027-01-15 07:58 UTC, last 2027-01-15 07:58 UTC. | key={fw}|root/hq-tunnel; message=IPsec tunnel hq-tunnel (vdom root) of fw-01 (device {fw}) is down; site=north",
					"92 [device:resources] Resources of device {fw} at 2027-01-15 07:59 UTC: CPU 20.0%, memory 40.0%, disk 10.0%, 1234 sessions; over the last hour (1 samples) peak CPU 20.0%, peak memory 40.0%. | ",
					"90 [device:vpn] VPN of device {fw} at 2027-01-15 07:59 UTC: 1 IPsec tunnels, 1 down; 1 SSL VPN users connected. | ",
					"89 [device:vpn] IPsec tunnel of device {fw}: down, up for 0 s, 0 B in, 0 B out. | tunnel=hq-tunnel; gateway=198.51.100.20; vdom=root",
					"80 [device:vpn_users] SSL VPN user of device {fw}: connected for 600 s, 1.00 kB in, 2.00 kB out. | user=alice; address=10.1.0.200; vdom=root",
					"88 [device:sdwan] SD-WAN health-check member of device {fw} at 2027-01-15 07:59 UTC: latency 40.0 ms, jitter 2.0 ms, loss 0.5%. | health_check=ping-dc; member=wan1; status=up; vdom=root",
				}},
			{"switch", ai.Scope{Kind: ai.ScopeDevice, Ref: itoa(s.coreSW)},
				[]string{"device:status", "device:alerts:summary", "device:interfaces", "device:resources"},
				[]string{
					"95 [device:interfaces] Interfaces of device {core} in its poll of 2027-01-15 07:59 UTC: 2 in all, 1 up, 1 down although enabled, 0 disabled. | ",
					"84 [device:interfaces] Interface ifIndex 1 of device {core} (class ethernet): oper up, rx 91.0%, tx 10.0% utilisation, 910 Mbit/s in, 100 Mbit/s out, speed 1.00 Gbit/s, errors 0 in / 0 out, discards 0 in / 0 out (since the counters started). | interface=Gi0/1; alias=uplink to fw-01",
					"82 [device:interfaces] Interface ifIndex 2 of device {core} (class ethernet): oper down, rx unknown, tx unknown utilisation, 0 bit/s in, 0 bit/s out, speed 1.00 Gbit/s, errors 0 in / 0 out, discards 0 in / 0 out (since the counters started). | interface=Gi0/2",
					"92 [device:resources] Resources of device {core} at 2027-01-15 07:59 UTC: CPU 35.0%, memory 60.0%, disk unknown, unknown sessions; over the last hour (1 samples) peak CPU 35.0%, peak memory 60.0%. | ",
				}},
			{"unreachable device", ai.Scope{Kind: ai.ScopeDevice, Ref: itoa(s.ap)},
				[]string{"device:status", "device:alerts:summary", "device:interfaces"},
				[]string{
					"100 [device:status] Device {ap}, polled by SNMP 2c every 60 s: its last poll failed; last poll 2027-01-15 07:59 UTC. | device=ap-03; kind=switch; site=north; address=10.1.0.33; last_error=timeout contacting 10.1.0.33",
					"95 [device:interfaces] Device {ap} reported no interfaces in the last 24 hours. | ",
				}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				fs, err := b.Facts(context.Background(), tc.scope, prompt.New())
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(tc.sources, sources(fs)); d != "" {
					t.Errorf("sources (-want +got):\n%s", d)
				}
				var got []string
				for _, f := range fs {
					got = append(got, line(f))
				}
				for _, w := range tc.lines {
					if w = ids.Replace(w); !slices.Contains(got, w) {
						t.Errorf("missing fact\n%s\ngot:\n%s", w, strings.Join(got, "\n"))
					}
				}
			})
		}
	})
}

// southValues are what only site south holds: a north reader never
// sees them.
var southValues = []string{"pay-01", "payd", "pay.south.example", "10.2.0.9", "sw-south", "203.0.113.99", "south"}

// TestSites: a site-bound reader's facts hold none of another site's
// values; another site's object is not found, in the very words of a
// missing one; Site answers the object's site.
func TestSites(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := seed(t, db)
		b := builder(db)
		ctx := context.Background()
		t.Run("north sees no south", func(t *testing.T) {
			for _, sc := range []ai.Scope{{Kind: ai.ScopeFleet}, {Kind: ai.ScopeAgent, Ref: itoa(s.web)}, {Kind: ai.ScopeIncident, Ref: itoa(s.incident)},
				{Kind: ai.ScopeAnomaly, Ref: itoa(s.anomalyAlert)}, {Kind: ai.ScopeDevice, Ref: itoa(s.fw)}, {Kind: ai.ScopeDevice, Ref: itoa(s.coreSW)}} {
				sc.Site = "north"
				fs, err := b.Facts(ctx, sc, prompt.New())
				if err != nil {
					t.Fatalf("%+v: %v", sc, err)
				}
				for _, f := range fs {
					for _, v := range southValues {
						if strings.Contains(line(f), v) {
							t.Errorf("%+v: %q in %s", sc, v, line(f))
						}
					}
				}
			}
		})
		for _, tc := range []struct {
			name          string
			scope         ai.Scope
			missing       ai.Scope
			wantSite      string
			unboundTarget string
		}{
			{"agent", ai.Scope{Kind: ai.ScopeAgent, Ref: itoa(s.pay), Site: "north"}, ai.Scope{Kind: ai.ScopeAgent, Ref: "999", Site: "north"}, "agent %s not found", "south"},
			{"incident", ai.Scope{Kind: ai.ScopeIncident, Ref: itoa(s.southIncident), Site: "north"}, ai.Scope{Kind: ai.ScopeIncident, Ref: "999"}, "incident %s not found", "south"},
			{"alert event", ai.Scope{Kind: ai.ScopeAnomaly, Ref: itoa(s.southAlert), Site: "north"}, ai.Scope{Kind: ai.ScopeAnomaly, Ref: "999"}, "alert event %s not found", "south"},
			{"device", ai.Scope{Kind: ai.ScopeDevice, Ref: itoa(s.swSouth), Site: "north"}, ai.Scope{Kind: ai.ScopeDevice, Ref: "999"}, "device %s not found", "south"},
		} {
			t.Run(tc.name+" of another site", func(t *testing.T) {
				for _, c := range []struct {
					scope ai.Scope
					ref   string
				}{{tc.scope, tc.scope.Ref}, {tc.missing, "999"}} {
					want := fmt.Sprintf(tc.wantSite, c.ref)
					_, err := b.Facts(ctx, c.scope, prompt.New())
					if errs.KindOf(err) != errs.NotFound || err.Error() != want {
						t.Errorf("Facts(%+v) = %v (%v); want not found %q", c.scope, err, errs.KindOf(err), want)
					}
					_, err = b.Site(ctx, c.scope)
					if errs.KindOf(err) != errs.NotFound || err.Error() != want {
						t.Errorf("Site(%+v) = %v; want not found %q", c.scope, err, want)
					}
				}
				unbound := tc.scope
				unbound.Site = ""
				if site, err := b.Site(ctx, unbound); err != nil || site != tc.unboundTarget {
					t.Errorf("Site(%+v) = %q, %v; want %q", unbound, site, err, tc.unboundTarget)
				}
			})
		}
		t.Run("site of the fleet and of a north agent", func(t *testing.T) {
			if site, err := b.Site(ctx, ai.Scope{Kind: ai.ScopeFleet, Site: "north"}); err != nil || site != "" {
				t.Errorf("fleet: %q, %v", site, err)
			}
			if site, err := b.Site(ctx, ai.Scope{Kind: ai.ScopeAgent, Ref: itoa(s.web), Site: "north"}); err != nil || site != "north" {
				t.Errorf("agent: %q, %v", site, err)
			}
		})
	})
}

// TestBadScopes: a ref that is no id, a fleet with a ref, an unknown
// kind are the caller's mistakes (400), never a lookup.
func TestBadScopes(t *testing.T) {
	b := facts.New(facts.Deps{}) // no store: nothing may be read
	for _, tc := range []struct {
		scope ai.Scope
		want  string
	}{
		{ai.Scope{Kind: ai.ScopeAgent, Ref: "web-01"}, "scope_ref: must be the id (a positive integer) of the agent"},
		{ai.Scope{Kind: ai.ScopeAnomaly, Ref: "-3"}, "scope_ref: must be the id (a positive integer) of the alert event"},
		{ai.Scope{Kind: ai.ScopeDevice, Ref: ""}, "scope_ref: must be the id (a positive integer) of the device"},
		{ai.Scope{Kind: ai.ScopeFleet, Ref: "1"}, "scope_ref: must be empty for the fleet scope"},
		{ai.Scope{Kind: "site"}, "scope_kind: must be one of fleet, agent, incident, anomaly, device"},
	} {
		for _, call := range []func() error{
			func() error { _, err := b.Facts(context.Background(), tc.scope, prompt.New()); return err },
			func() error { _, err := b.Site(context.Background(), tc.scope); return err },
		} {
			if err := call(); errs.KindOf(err) != errs.Invalid || err.Error() != tc.want {
				t.Errorf("%+v: %v; want invalid %q", tc.scope, err, tc.want)
			}
		}
	}
}

// TestPseudonymised: built into a context with the conversation's
// pseudonyms, no seeded address, MAC, host or user name is left in the
// bytes sent, whatever the scope; every fact fits the generous budget,
// so none was dropped to pass.
func TestPseudonymised(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := seed(t, db)
		b := builder(db)
		for _, sc := range []ai.Scope{{Kind: ai.ScopeFleet}, {Kind: ai.ScopeAgent, Ref: itoa(s.web)}, {Kind: ai.ScopeAgent, Ref: itoa(s.pay)},
			{Kind: ai.ScopeIncident, Ref: itoa(s.incident)}, {Kind: ai.ScopeAnomaly, Ref: itoa(s.portAlert)}, {Kind: ai.ScopeAnomaly, Ref: itoa(s.vpnDown)},
			{Kind: ai.ScopeDevice, Ref: itoa(s.fw)}, {Kind: ai.ScopeDevice, Ref: itoa(s.coreSW)}, {Kind: ai.ScopeDevice, Ref: itoa(s.ap)}} {
			ps := prompt.New()
			fs, err := b.Facts(context.Background(), sc, ps)
			if err != nil {
				t.Fatalf("%+v: %v", sc, err)
			}
			c, err := prompt.Build(prompt.SystemPrompt, fs, 1<<20, ps)
			if err != nil {
				t.Fatal(err)
			}
			if c.Omitted != 0 || c.Included != len(fs) {
				t.Fatalf("%+v: %d of %d facts included", sc, c.Included, len(fs))
			}
			sent := strings.ToLower(string(c.Bytes))
			for _, v := range append(slices.Clone(seededHosts), seededAddrs...) {
				if strings.Contains(sent, strings.ToLower(v)) {
					t.Errorf("%+v: %q sent:\n%s", sc, v, c.Bytes)
				}
			}
			if !strings.Contains(sent, "host-1") {
				t.Errorf("%+v: no host token sent", sc)
			}
		}
	})
}

// TestDeepAnomalySeries: an anomaly of a process's traffic shows that
// process's minutes (bits per second), the name in the data only.
func TestDeepAnomalySeries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := seed(t, db)
		e, err := db.InsertAlertEvent(context.Background(), record.AlertEvent{TS: now - 1200, Kind: "anomaly", Key: itoa(s.web) + "|proc:xmrig", Severity: 6,
			State: "firing", Site: "north", AgentID: s.web, Message: "agent " + itoa(s.web) + ": proc:xmrig 8.0 kbit/s"})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := builder(db).Facts(context.Background(), ai.Scope{Kind: ai.ScopeAnomaly, Ref: itoa(e.ID), Site: "north"}, prompt.New())
		if err != nil {
			t.Fatal(err)
		}
		// xmrig sent 40 kB in and 20 kB out in the minute 07:40: 8 kbit/s.
		want := fmt.Sprintf("96 [anomaly:series] Series of alert event %d: the series named in the data of agent %d, mean per 5 minutes from 2027-01-15 07:10 UTC to 2027-01-15 08:00 UTC (first firing 2027-01-15 07:40 UTC, last 2027-01-15 07:40 UTC); buckets without samples are left out: 07:40 8.00 kbit/s | series=proc:xmrig",
			e.ID, s.web)
		var got []string
		for _, f := range fs {
			got = append(got, line(f))
		}
		if !slices.Contains(got, want) {
			t.Errorf("missing\n%s\ngot:\n%s", want, strings.Join(got, "\n"))
		}
	})
}

// TestBudget: when the budget is short, what is left out is the least
// useful: the fleet's state and open alerts stay, the interface and
// SNI/Host lists go first.
func TestBudget(t *testing.T) {
	db := storetest.OpenSQLite(t)
	seed(t, db)
	ps := prompt.New()
	fs, err := builder(db).Facts(context.Background(), ai.Scope{Kind: ai.ScopeFleet}, ps)
	if err != nil {
		t.Fatal(err)
	}
	c, err := prompt.Build(prompt.SystemPrompt, fs, 5<<10, ps)
	if err != nil {
		t.Fatal(err)
	}
	if c.Omitted == 0 || len(c.Bytes) > 5<<10 {
		t.Fatalf("%d bytes, %d facts left out: the budget does not bite", len(c.Bytes), c.Omitted)
	}
	var kept []string
	for _, f := range c.Preview.Facts {
		kept = append(kept, f.Source)
	}
	for _, src := range []string{"agents:summary", "alerts:summary", "incidents:open", "alerts:open"} {
		if !slices.Contains(kept, src) {
			t.Errorf("%s left out; kept %v", src, kept)
		}
	}
	for _, src := range []string{"devices:interfaces", "l7:top_hosts"} {
		if slices.Contains(kept, src) {
			t.Errorf("%s kept before more useful facts; kept %v", src, kept)
		}
	}
}
