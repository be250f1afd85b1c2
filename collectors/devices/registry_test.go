package devices

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/app/errs"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/vault"
)

func ptr[T any](v T) *T { return &v }

// TestValidate: each refusal names its field by the typed error (the
// API's 400 carries it), with the exact message; a valid input gets its
// defaults.
func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		desc      string
		in        Input
		wantField string
		wantMsg   string
	}{
		{"empty name", Input{Name: " "}, "name", "name must be 1 to 200 characters"},
		{"unknown kind", Input{Name: "x", Kind: "toaster"}, "kind", "kind must be one of switch, router, firewall, access-point, server, wireless-controller, load-balancer, other"},
		{"poll too often", Input{Name: "x", PollSeconds: 5}, "poll_seconds", "poll_seconds must be 10 to 86400"},
		{"bad port", Input{Name: "x", Host: "10.0.0.1:0"}, "host", `host "10.0.0.1:0": bad port`},
		{"bad version", Input{Name: "x", Host: "10.0.0.1", SNMPVersion: "4"}, "snmp_version", `snmp_version "4": want 1, 2c or 3`},
		{"v3 without user", Input{Name: "x", Host: "10.0.0.1", SNMPVersion: "3"}, "v3_user", "v3_user is required with snmp_version 3"},
		{"v3 bad auth", Input{Name: "x", Host: "10.0.0.1", SNMPVersion: "3", V3User: "u", V3AuthProto: "SHA1024"}, "v3_auth_proto", `v3_auth_proto "SHA1024": want SHA, SHA256, SHA512 or MD5`},
		{"v3 priv without auth", Input{Name: "x", Host: "10.0.0.1", SNMPVersion: "3", V3User: "u", V3PrivProto: "AES"}, "v3_priv_proto", "v3_priv_proto needs v3_auth_proto (authPriv)"},
		{"v3 bad priv", Input{Name: "x", Host: "10.0.0.1", SNMPVersion: "3", V3User: "u", V3AuthProto: "SHA", V3PrivProto: "ROT13"}, "v3_priv_proto", `v3_priv_proto "ROT13": want AES, AES256 or DES`},
		{"other vendor", Input{Name: "x", Vendor: "acme"}, "vendor", "vendor must be fwvendor or empty"},
		{"REST without https", Input{Name: "x", Vendor: "fwvendor", APIURL: "http://fw"}, "api_url", "api_url must be https://<device>[:port]"},
		{"REST too often", Input{Name: "x", Vendor: "fwvendor", APIURL: "https://fw", PollSeconds: 30}, "poll_seconds", "a REST device is polled at most once a minute (poll_seconds >= 60)"},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			_, err := Validate(tt.in)
			e, ok := errs.As(err)
			if !ok || e.Kind != errs.Invalid || e.Field != tt.wantField || e.Msg != tt.wantMsg {
				t.Fatalf("error %#v; want invalid field %q: %q", err, tt.wantField, tt.wantMsg)
			}
		})
	}
	got, err := Validate(Input{Name: " core ", Host: "192.0.2.1", V3AuthProto: "sha-256", APIVerifyTLS: ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	want := record.Device{Name: "core", Host: "192.0.2.1", Kind: "switch", SNMPVersion: "2c", Community: "public", PollSeconds: 60, Enabled: true,
		V3AuthProto: "SHA256", Profile: "auto"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("defaults (-got, +want):\n%s", diff)
	}
}

// TestSecretsSealedPerRow: credentials open with their own row's id as
// associated data only (a blob moved to another row does not open:
// case 30), and a device without secrets needs no vault.
func TestSecretsSealedPerRow(t *testing.T) {
	v, err := vault.New(vault.Key{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	blob, err := v.Seal([]byte(`{"community":"c0mm","v3_auth_pass":"a","v3_priv_pass":"p","api_token":"tok"}`), AD(7))
	if err != nil {
		t.Fatal(err)
	}
	got, err := OpenSecrets(v, store.Device{ID: 7, Name: "sw", Host: "h", SNMPVersion: "3", V3User: "u", Secrets: blob, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	want := record.Device{ID: 7, Name: "sw", Host: "h", SNMPVersion: "3", V3User: "u", Enabled: true, Community: "c0mm", V3AuthPass: "a", V3PrivPass: "p", APIToken: "tok"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("opened (-got, +want):\n%s", diff)
	}
	if _, err := OpenSecrets(v, store.Device{ID: 8, Secrets: blob}); err == nil {
		t.Error("a blob moved to row 8 opened")
	}
	if _, err := OpenSecrets(nil, store.Device{ID: 9, Secrets: blob}); err == nil || errors.Unwrap(err) != nil {
		t.Errorf("no vault: %v", err)
	}
	if d, err := OpenSecrets(nil, store.Device{ID: 10, Name: "node"}); err != nil || d.ID != 10 || d.Community != "" {
		t.Errorf("no secrets: %+v, %v", d, err)
	}
}

// TestIfaceStatus: spec 3's colours, computed by the server.
func TestIfaceStatus(t *testing.T) {
	for _, tt := range []struct {
		desc string
		f    record.IfaceSample
		want string
	}{
		{"oper down wins", record.IfaceSample{OperUp: false, RxUtilPct: ptr(95.0)}, "down"},
		{"speed unknown", record.IfaceSample{OperUp: true}, "normal"},
		{"below 70", record.IfaceSample{OperUp: true, RxUtilPct: ptr(69.9), TxUtilPct: ptr(10.0)}, "normal"},
		{"70 out", record.IfaceSample{OperUp: true, RxUtilPct: ptr(1.0), TxUtilPct: ptr(70.0)}, "warning"},
		{"90 in", record.IfaceSample{OperUp: true, RxUtilPct: ptr(90.0), TxUtilPct: ptr(0.0)}, "critical"},
	} {
		if got := IfaceStatus(tt.f); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.desc, got, tt.want)
		}
	}
}
