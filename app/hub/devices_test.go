package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/app/api"
	"netmon/app/config"
	"netmon/collectors/devices"
	"netmon/collectors/fwrest/fwtest"
	"netmon/collectors/snmp/snmptest"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

const hostileSysDescr = "<img src=x onerror=alert(1)>\u202egnp.exe"

// TestDeviceRoutes: a device added over the API against a real snmpd
// (v3 SHA-256/AES-256) is polled by the hub; the list carries exactly the
// fields of spec 2.11 and no credential; interfaces and resources read
// its samples; the credentials are sealed per row (a blob moved to
// another row does not open); a site-bound caller's site is forced and
// another site's device is a 404; delete removes the samples; create
// and delete are audited without secrets. Both databases.
func TestDeviceRoutes(t *testing.T) {
	agent := snmptest.Start(t, "sysName core-sw9", "sysDescr "+hostileSysDescr)
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		ctx := context.Background()

		// Validation.
		for _, tt := range []struct {
			body map[string]any
			want string
		}{
			{map[string]any{"name": ""}, `{"error":"name must be 1 to 200 characters"}`},
			{map[string]any{"name": "x", "kind": "toaster"}, `{"error":"kind must be one of switch, router, firewall, access-point, server, wireless-controller, load-balancer, other"}`},
			{map[string]any{"name": "x", "host": "10.0.0.1", "snmp_version": "3"}, `{"error":"v3_user is required with snmp_version 3"}`},
			{map[string]any{"name": "x", "host": "10.0.0.1", "snmp_version": "3", "v3_user": "u", "v3_auth_proto": "SHA1024"}, `{"error":"v3_auth_proto \"SHA1024\": want SHA, SHA256, SHA512 or MD5"}`},
			{map[string]any{"name": "x", "poll_seconds": 5}, `{"error":"poll_seconds must be 10 to 86400"}`},
		} {
			if r := boot.call("POST", "/api/v1/devices", tt.body); r.code != 400 || r.body != tt.want {
				t.Errorf("create %v: %d %s, want 400 %s", tt.body, r.code, r.body, tt.want)
			}
		}

		var created api.DeviceItem
		boot.call("POST", "/api/v1/devices", map[string]any{"name": "core", "host": agent.Addr, "site": "a", "snmp_version": "3",
			"v3_user": "u2", "v3_auth_proto": "SHA256", "v3_auth_pass": snmptest.AuthPass, "v3_priv_proto": "AES256", "v3_priv_pass": snmptest.PrivPass,
			"poll_seconds": 10}).must(t, 200).decode(t, &created)
		var node api.DeviceItem
		boot.call("POST", "/api/v1/devices", map[string]any{"name": "patch-panel", "site": "b", "community": "s3cret-community"}).must(t, 200).decode(t, &node)

		// The poller picks it up at once and polls within its 10 s phase.
		deadline := time.Now().Add(15 * time.Second)
		var d store.Device
		for {
			var err error
			if d, err = h.db.Device(ctx, created.ID); err != nil {
				t.Fatal(err)
			}
			if d.LastPoll > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if d.LastError != "" || d.SysName != "core-sw9" || d.SysDescr != hostileSysDescr {
			t.Fatalf("after the first poll: last_poll %d, last_error %q, sys_name %q, sys_descr %q", d.LastPoll, d.LastError, d.SysName, d.SysDescr)
		}

		r := boot.call("GET", "/api/v1/devices", nil).must(t, 200)
		want := fmt.Sprintf(`[{"id":%d,"name":"core","host":"%s","kind":"switch","site":"a","snmp_version":"3","poll_seconds":10,"enabled":true,"sys_name":"core-sw9","sys_descr":%s,"last_poll":%d,"last_error":"",`+
			`"vendor":"","api_profile":"","api_version":"","api_caps":""},`+
			`{"id":%d,"name":"patch-panel","host":"","kind":"switch","site":"b","snmp_version":"2c","poll_seconds":60,"enabled":true,"sys_name":"","sys_descr":"","last_poll":0,"last_error":"",`+
			`"vendor":"","api_profile":"","api_version":"","api_caps":""}]`,
			created.ID, agent.Addr, jsonString(hostileSysDescr), d.LastPoll, node.ID)
		if r.body != want {
			t.Errorf("list:\n got %s\nwant %s", r.body, want)
		}
		for _, secret := range []string{snmptest.AuthPass, snmptest.PrivPass, "s3cret-community"} {
			if strings.Contains(r.body, secret) {
				t.Errorf("the list carries a credential")
			}
		}

		var ifs []record.IfaceSample
		boot.call("GET", fmt.Sprintf("/api/v1/devices/%d/interfaces", created.ID), nil).must(t, 200).decode(t, &ifs)
		var lo *record.IfaceSample
		for i := range ifs {
			if ifs[i].Name == "lo" {
				lo = &ifs[i]
			}
		}
		if lo == nil || lo.Class != "loopback" || !lo.OperUp || lo.InOctets == 0 || lo.TS != d.LastPoll {
			t.Errorf("interfaces: lo = %+v (of %d)", lo, len(ifs))
		}
		// One interface's history: the one poll so far, equal to the
		// interfaces route's row; an unknown ifIndex answers [].
		if lo != nil {
			var hist []store.IfaceRate
			boot.call("GET", fmt.Sprintf("/api/v1/devices/%d/interfaces/%d/history?minutes=5", created.ID, lo.IfIndex), nil).must(t, 200).decode(t, &hist)
			if len(hist) == 0 || hist[len(hist)-1].TS != lo.TS || hist[len(hist)-1].RxBps != lo.RxBps || !hist[len(hist)-1].OperUp {
				t.Errorf("history of lo = %+v, lo = %+v", hist, lo)
			}
			if b := boot.call("GET", fmt.Sprintf("/api/v1/devices/%d/interfaces/999999/history", created.ID), nil).must(t, 200).body; b != "[]" {
				t.Errorf("unknown ifIndex: %s", b)
			}
		}
		var res []record.ResourceSample
		boot.call("GET", fmt.Sprintf("/api/v1/devices/%d/resources?minutes=5", created.ID), nil).must(t, 200).decode(t, &res)
		if len(res) == 0 || res[0].MemPct == nil || res[0].DiskPct == nil {
			t.Errorf("resources = %+v", res)
		}

		// Sealed per row: the blob opens only as its own row's.
		row, _ := h.db.Device(ctx, node.ID)
		if strings.Contains(string(row.Secrets), "s3cret") {
			t.Error("the community is stored in clear")
		}
		if _, err := h.vault.Open(row.Secrets, devices.AD(node.ID)); err != nil {
			t.Errorf("own row: %v", err)
		}
		if _, err := h.vault.Open(row.Secrets, devices.AD(created.ID)); err == nil {
			t.Error("a blob moved to another row opened")
		}

		// Site scope: b's netops sees b only, its creations land in b.
		boot.createUser("netb", "long-enough-1", "netops", "b")
		nb := h.client(t)
		nb.login("netb", "long-enough-1")
		var listB []api.DeviceItem
		nb.call("GET", "/api/v1/devices", nil).must(t, 200).decode(t, &listB)
		if len(listB) != 1 || listB[0].ID != node.ID {
			t.Errorf("site b sees %+v", listB)
		}
		for _, p := range []string{"/interfaces", "/interfaces/1/history", "/resources", "/vpn", "/sdwan", "/policies"} {
			nb.call("GET", fmt.Sprintf("/api/v1/devices/%d%s", created.ID, p), nil).must(t, 404)
		}
		nb.call("DELETE", fmt.Sprintf("/api/v1/devices/%d", created.ID), nil).must(t, 404)
		var pinned api.DeviceItem
		nb.call("POST", "/api/v1/devices", map[string]any{"name": "b-node", "site": "a"}).must(t, 200).decode(t, &pinned)
		if pinned.Site != "b" {
			t.Errorf("site-bound creation landed in %q", pinned.Site)
		}

		// Delete removes the samples.
		if n, _, _ := h.db.DeviceSampleCounts(ctx, created.ID); n == 0 {
			t.Fatal("no interface samples before the delete")
		}
		boot.call("DELETE", fmt.Sprintf("/api/v1/devices/%d", created.ID), nil).must(t, 200)
		if n, m, err := h.db.DeviceSampleCounts(ctx, created.ID); err != nil || n != 0 || m != 0 {
			t.Errorf("after delete: %d interface and %d resource rows (%v)", n, m, err)
		}
		boot.call("GET", fmt.Sprintf("/api/v1/devices/%d/interfaces", created.ID), nil).must(t, 404)

		evs, err := h.db.ListAudit(ctx, store.AuditFilter{Action: "device.*"})
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range evs {
			actions = append(actions, e.Action+" "+e.Target)
			for _, secret := range []string{snmptest.AuthPass, snmptest.PrivPass, "s3cret-community"} {
				if strings.Contains(e.Detail, secret) {
					t.Errorf("audit %s carries a credential: %s", e.Action, e.Detail)
				}
			}
		}
		wantActions := fmt.Sprintf("[device.delete devices/%d device.create devices/%d device.create devices/%d device.create devices/%d]", created.ID, pinned.ID, node.ID, created.ID)
		if fmt.Sprint(actions) != wantActions {
			t.Errorf("audit: %v, want %s", actions, wantActions)
		}
	})
}

// TestDeviceProbe: the probe reports per endpoint, and says why a v3
// device does not answer, without saving anything.
func TestDeviceProbe(t *testing.T) {
	agent := snmptest.Start(t, "sysName probe-me")
	h, boot := bootstrap(t, storetestSQLite(t))
	var ok api.ProbeReport
	boot.call("POST", "/api/v1/devices/probe", map[string]any{"name": "p", "host": agent.Addr, "community": "public"}).must(t, 200).decode(t, &ok)
	if !ok.OK || ok.SysName != "probe-me" || len(ok.Endpoints) != 4 || ok.Endpoints[0].Endpoint != "system" || !ok.Endpoints[1].Connectivity ||
		ok.Endpoints[1].Records == 0 || ok.Endpoints[1].Format != "snmp-v2c" {
		t.Errorf("probe = %+v", ok)
	}
	var bad api.ProbeReport
	boot.call("POST", "/api/v1/devices/probe", map[string]any{"name": "p", "host": agent.Addr, "snmp_version": "3", "v3_user": "u1",
		"v3_auth_proto": "SHA", "v3_auth_pass": "not-the-password", "v3_priv_proto": "AES", "v3_priv_pass": snmptest.PrivPass}).must(t, 200).decode(t, &bad)
	if bad.OK || bad.Error != "authentication failure (wrong auth password or protocol)" || bad.Endpoints[0].Error != bad.Error {
		t.Errorf("probe with a wrong password = %+v", bad)
	}
	// A firewall REST device: the fixture device (self-signed TLS).
	fw := fwtest.Start(filepath.Join("..", "..", "testdata", "fwrest", "7.2"), "fw-token")
	defer fw.Close()
	var rest api.ProbeReport
	boot.call("POST", "/api/v1/devices/probe", map[string]any{"name": "fw", "vendor": "fwvendor", "api_url": fw.URL, "api_token": "fw-token",
		"api_verify_tls": false, "poll_seconds": 60}).must(t, 200).decode(t, &rest)
	if !rest.OK || rest.Version != "v7.2.8" || rest.VDOMMode != "single" || rest.SysName != "fw-edge-1" || len(rest.Endpoints) != 7 ||
		rest.Endpoints[2] != (api.ProbeEndpoint{Endpoint: "interfaces", Connectivity: true, HTTPCode: 200, Records: 2, Format: "json"}) {
		t.Errorf("REST probe = %+v", rest)
	}
	boot.call("POST", "/api/v1/devices/probe", map[string]any{"name": "fw", "vendor": "fwvendor", "api_url": fw.URL, "api_token": "fw-token"}).must(t, 200).decode(t, &rest)
	if rest.OK || !strings.HasPrefix(rest.Error, "TLS: the device's certificate is not trusted") {
		t.Errorf("REST probe with verification on = %+v", rest)
	}
	// Case 28: the driver dials through the outbound guard; a configured
	// IP literal is allowed, a cloud metadata address never is.
	boot.call("POST", "/api/v1/devices/probe", map[string]any{"name": "fw", "vendor": "fwvendor", "api_url": "https://169.254.169.254:443", "api_token": "fw-token",
		"api_verify_tls": false}).must(t, 200).decode(t, &rest)
	if rest.OK || !strings.Contains(rest.Error, "cloud metadata address") {
		t.Errorf("REST probe of the metadata address = %+v", rest)
	}
	if list, _ := h.db.Devices(context.Background(), ""); len(list) != 0 {
		t.Errorf("a probe saved %d devices", len(list))
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
