package fwrest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// env wraps results in a successful envelope.
func env(results string) string {
	return `{"status":"success","vdom":"root","serial":"FGT60F0000000001","version":"v7.6.0","results":` + results + `}`
}

// TestHostileEnvelopes: every endpoint refuses the shapes that are not
// a monitor API answer (issue 28 item 1: `[]` used to crash the hub),
// with the driver's own words, and reads nothing from them.
func TestHostileEnvelopes(t *testing.T) {
	deep := env(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
	many := "[" + strings.TrimSuffix(strings.Repeat(env("[]")+",", maxVDOMs+1), ",") + "]"
	for _, tc := range []struct{ desc, body, want string }{
		{"empty array", `[]`, "an empty array (no virtual domain answered)"},
		{"null", `null`, "answer: want an object, got null"},
		{"empty object", `{}`, `no status "success"`},
		{"empty body", ``, "answer: missing"},
		{"a string", `"success"`, "answer: want an object, got a string"},
		{"a number", `1e999`, "answer: want an object, got a number"},
		{"array of null", `[null]`, "answer: want an object, got null"},
		{"array of arrays", `[[]]`, "answer: want an object, got an array"},
		{"another status", `{"status":"error","results":{}}`, `the device answered a status other than "success"`},
		{"no results", `{"status":"success"}`, "no results"},
		{"status of another type", `{"status":1,"results":{}}`, "status: want a string, got a number"},
		{"http_status a string", `{"status":"success","http_status":"200","results":{}}`, "http_status: want an integer, got a string"},
		{"build past int", `{"status":"success","build":1e400,"results":{}}`, "build: want an integer, got a number"},
		{"serial an object", `{"status":"success","serial":{},"results":{}}`, "serial: want a string, got an object"},
		{"nested too deeply", deep, "nested too deeply"},
		{"truncated", `{"status":"success","results":{`, "malformed JSON at byte 31"},
		{"too many virtual domains", many, "answer: over 1000 entries: too many entries"},
	} {
		for _, ep := range endpointNames {
			t.Run(tc.desc+"/"+ep, func(t *testing.T) {
				var r Result
				n, err := decodeAnswer(ep, []byte(tc.body), &r, 100)
				var de *DecodeError
				if !errors.As(err, &de) || de.Reason != tc.want || n != 0 {
					t.Fatalf("got %d, %v; want the decode error %q", n, err, tc.want)
				}
				if got, _ := json.Marshal(r); string(got) != string(must(json.Marshal(Result{}))) {
					t.Errorf("a refused answer filled %s", got)
				}
			})
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestHostileResults: each endpoint's results in every wrong shape (the
// wrong container, a string where a number belongs, a number past its
// type, a negative counter, too many entries) fail that endpoint with
// what was wrong; odd but harmless values are read safely.
func TestHostileResults(t *testing.T) {
	for _, tc := range []struct {
		desc, endpoint, results, want string
		records                       int
	}{
		{"status: an array", "status", `[]`, "results: want an object, got an array", 0},
		{"status: null", "status", `null`, "results: want an object, got null", 0},
		{"status: a string", "status", `"fw"`, "results: want an object, got a string", 0},
		{"status: hostname a number", "status", `{"hostname":12}`, "hostname: want a string, got a number", 0},
		{"status: empty object", "status", `{}`, "", 1},
		{"status: names not shaped as names are left out", "status", `{"hostname":"<img src=x>","model":"a b"}`, "", 1},

		{"resources: an array", "resources", `[]`, "results: want an object, got an array", 0},
		{"resources: null", "resources", `null`, "results: want an object, got null", 0},
		{"resources: cpu an object", "resources", `{"cpu":{}}`, "results.cpu: want an array, got an object", 0},
		{"resources: cpu of numbers", "resources", `{"cpu":[7]}`, "results.cpu[0]: want an object, got a number", 0},
		{"resources: current a string", "resources", `{"cpu":[{"current":"7"}]}`, "current: want a number, got a string", 0},
		{"resources: current past float", "resources", `{"cpu":[{"current":1e400}]}`, "current: want a number, got a number", 0},
		{"resources: cpu 1e300", "resources", `{"cpu":[{"current":1e300}]}`, "results.cpu: a percentage out of 0..100", 0},
		{"resources: sessions negative", "resources", `{"session":[{"current":-1}]}`, "results.session: a count out of range", 0},
		{"resources: sessions huge", "resources", `{"session":[{"current":1e19}]}`, "results.session: a count out of range", 0},
		{"resources: unknown key named generically", "resources", `{"s3cr3t":{}}`, "results.other: want an array, got an object", 0},
		{"resources: empty", "resources", `{}`, "", 0},
		{"resources: null lists", "resources", `{"cpu":null,"mem":[]}`, "", 0},
		{"resources: too many", "resources", `{"a":[],"b":[],"c":[],"d":[]}`, "results: over 3 entries: too many entries", 0},

		{"interfaces: an array", "interfaces", `[]`, "results: want an object, got an array", 0},
		{"interfaces: null", "interfaces", `null`, "results: want an object, got null", 0},
		{"interfaces: member an array", "interfaces", `{"port1":[]}`, "results.<interface>: want an object, got an array", 0},
		{"interfaces: member null", "interfaces", `{"port1":null}`, "results.<interface>: want an object, got null", 0},
		{"interfaces: rx_bytes a string", "interfaces", `{"port1":{"rx_bytes":"1"}}`, "rx_bytes: want a non-negative integer, got a string", 0},
		{"interfaces: rx_bytes negative", "interfaces", `{"port1":{"rx_bytes":-1}}`, "rx_bytes: want a non-negative integer, got a number", 0},
		{"interfaces: rx_bytes past uint64", "interfaces", `{"port1":{"rx_bytes":18446744073709551616}}`, "rx_bytes: want a non-negative integer, got a number", 0},
		{"interfaces: link a string", "interfaces", `{"port1":{"link":"up"}}`, "link: want a boolean, got a string", 0},
		{"interfaces: speed 1e300 is unknown", "interfaces", `{"port1":{"name":"port1","speed":1e300}}`, "", 1},
		{"interfaces: too many", "interfaces", `{"a":{},"b":{},"c":{},"d":{}}`, "results: over 3 entries: too many entries", 0},

		{"vpn_ipsec: an object", "vpn_ipsec", `{}`, "results: want an array, got an object", 0},
		{"vpn_ipsec: a string", "vpn_ipsec", `"up"`, "results: want an array, got a string", 0},
		{"vpn_ipsec: null is none", "vpn_ipsec", `null`, "", 0},
		{"vpn_ipsec: empty", "vpn_ipsec", `[]`, "", 0},
		{"vpn_ipsec: element a number", "vpn_ipsec", `[1]`, "results[]: want an object, got a number", 0},
		{"vpn_ipsec: proxyid an object", "vpn_ipsec", `[{"proxyid":{}}]`, "proxyid: want an array, got an object", 0},
		{"vpn_ipsec: bytes a string", "vpn_ipsec", `[{"incoming_bytes":"5"}]`, "incoming_bytes: want a non-negative integer, got a string", 0},
		{"vpn_ipsec: too many", "vpn_ipsec", `[{},{},{},{}]`, "results: over 3 entries: too many entries", 0},

		{"vpn_ssl: an object", "vpn_ssl", `{}`, "results: want an array, got an object", 0},
		{"vpn_ssl: user a number", "vpn_ssl", `[{"user_name":1}]`, "user_name: want a string, got a number", 0},
		{"vpn_ssl: login past int64", "vpn_ssl", `[{"last_login_time":1e30}]`, "last_login_time: want an integer, got a number", 0},

		{"sdwan: an array", "sdwan", `[]`, "results: want an object, got an array", 0},
		{"sdwan: check an array", "sdwan", `{"dns":[]}`, "results.<check>: want an object, got an array", 0},
		{"sdwan: member a string", "sdwan", `{"dns":{"port1":"up"}}`, "results.<check>.<member>: want an object, got a string", 0},
		{"sdwan: latency a string", "sdwan", `{"dns":{"port1":{"latency":"1"}}}`, "latency: want a number, got a string", 0},
		{"sdwan: too many members", "sdwan", `{"a":{"1":{},"2":{}},"b":{"1":{},"2":{}}}`, "results: over 3 entries: too many entries", 0},

		{"policies: an object", "policies", `{}`, "results: want an array, got an object", 0},
		{"policies: policyid a string", "policies", `[{"policyid":"1"}]`, "policyid: want an integer, got a string", 0},
		{"policies: hit_count negative", "policies", `[{"hit_count":-5}]`, "hit_count: want a non-negative integer, got a number", 0},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			var r Result
			n, err := decodeAnswer(tc.endpoint, []byte(env(tc.results)), &r, 3)
			got := ""
			if err != nil {
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("err %T %v, want a *DecodeError", err, err)
				}
				got = de.Reason
			}
			if got != tc.want || n != tc.records {
				t.Errorf("got (%d, %q), want (%d, %q)", n, got, tc.records, tc.want)
			}
		})
	}
}

// TestDecodeErrorsQuoteNothing: the errors are the driver's words, not
// the answer's (the probe returns them to its caller).
func TestDecodeErrorsQuoteNothing(t *testing.T) {
	const secret = "AKIAsecretvalue"
	for _, body := range []string{
		`{"status":"` + secret + `","results":{}}`,
		`{"` + secret + `":1}`,
		`{"status":"success","results":{"` + secret + `":{}}}`,
		`{"status":"success","results":{"hostname":` + `"` + secret + `",}}`,
		`{"status":"success","results":{"` + secret + `":[1]}}`,
		secret,
	} {
		for _, ep := range endpointNames {
			var r Result
			_, err := decodeAnswer(ep, []byte(body), &r, 100)
			if err != nil && strings.Contains(strings.ToLower(err.Error()), "secret") {
				t.Errorf("%s: %s: the error quotes the answer: %v", ep, body, err)
			}
		}
	}
}

// fixtureAnswers are the fixture sets' bodies with their endpoint index.
func fixtureAnswers(tb testing.TB) (eps []uint8, bodies [][]byte) {
	files := map[string]string{"status": "system_status", "resources": "system_resource_usage", "interfaces": "system_interface",
		"vpn_ipsec": "vpn_ipsec", "vpn_ssl": "vpn_ssl", "sdwan": "virtual-wan_health-check", "policies": "firewall_policy"}
	for _, p := range []string{"7.0", "7.2", "7.4", "7.6"} {
		for i, ep := range endpointNames {
			b, err := os.ReadFile(filepath.Join(fixture(p), files[ep]+".json"))
			if err != nil {
				tb.Fatal(err)
			}
			eps, bodies = append(eps, uint8(i)), append(bodies, b)
		}
	}
	return eps, bodies
}

// FuzzDecodeAnswer: any body on any endpoint decodes or fails with a
// *DecodeError, never panics, fills at most the bound, and leaves a
// Result the hub can answer as JSON. Seeded from the fixture sets of
// every profile and the hostile shapes.
func FuzzDecodeAnswer(f *testing.F) {
	eps, bodies := fixtureAnswers(f)
	for i := range eps {
		f.Add(eps[i], bodies[i])
	}
	for i := range endpointNames {
		for _, s := range []string{`[]`, `null`, `{}`, `[{"status":"success","vdom":"a","results":[]},{"status":"success","results":null}]`,
			env(`{"a":{"b":{}}}`), env(`[{"proxyid":[{"status":"up"}]}]`), env(`{"cpu":[{"current":7}]}`)} {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, ep uint8, body []byte) {
		name := endpointNames[int(ep)%len(endpointNames)]
		var r Result
		n, err := decodeAnswer(name, body, &r, 50)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || n != 0 {
				t.Fatalf("err %T %v with %d records", err, err, n)
			}
		}
		if n > 50 || len(r.Ifaces) > 50 || len(r.Tunnels) > 50 || len(r.SSLUsers) > 50 || len(r.Health) > 50 || len(r.Policies) > 50 {
			t.Fatalf("over the bound: %d", n)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("the result does not encode: %v", err)
		}
	})
}

// TestFixturesDecode: the fixture bodies all decode (the fuzz seeds are
// the real shapes, not only errors).
func TestFixturesDecode(t *testing.T) {
	eps, bodies := fixtureAnswers(t)
	for i := range eps {
		var r Result
		if _, err := decodeAnswer(endpointNames[eps[i]], bodies[i], &r, 100); err != nil {
			t.Errorf("%s: %v", endpointNames[eps[i]], err)
		}
	}
}

// TestStatusIdentity: the status answer must carry a firmware version
// and a serial number (what another HTTPS service's JSON does not), and
// names not shaped as names are left out: the probe returns them.
func TestStatusIdentity(t *testing.T) {
	for _, tc := range []struct{ desc, body, want, host string }{
		{"the firewall", `{"status":"success","serial":"FGT60F0000000001","version":"v7.4.4","results":{"hostname":"fw-1"}}`, "", "fw-1"},
		{"no version", `{"status":"success","serial":"FGT60F0000000001","results":{"hostname":"fw-1"}}`, "no firmware version", ""},
		{"a version that is text", `{"status":"success","serial":"FGT60F0000000001","version":"token=abc","results":{}}`, "no firmware version", ""},
		{"no serial", `{"status":"success","version":"v7.4.4","results":{}}`, "no serial number", ""},
		{"a serial that is text", `{"status":"success","version":"v7.4.4","serial":"a b","results":{}}`, "no serial number", ""},
		{"a host name that is text", `{"status":"success","serial":"FGT60F0000000001","version":"v7.4.4","results":{"hostname":"password: hunter2"}}`, "", ""},
	} {
		var r Result
		_, err := decodeAnswer("status", []byte(tc.body), &r, 10)
		got := ""
		if err != nil {
			got = err.(*DecodeError).Reason
		}
		if got != tc.want || r.Hostname != tc.host {
			t.Errorf("%s: (%q, host %q), want (%q, %q)", tc.desc, got, r.Hostname, tc.want, tc.host)
		}
	}
}
