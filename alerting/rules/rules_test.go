package rules

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBW(t *testing.T) {
	cfg := BWConfig{InMbps: 10, OutMbps: 20, Seconds: 3}
	over := Traffic{Running: true, InBps: 11e6}
	under := Traffic{Running: true, InBps: 9e6, OutBps: 19e6}
	tests := []struct {
		desc  string
		input []Traffic
		fires []bool
	}{
		{"fires on the third consecutive second and every second after", []Traffic{over, over, over, over}, []bool{false, false, true, true}},
		{"a second under resets the run", []Traffic{over, over, under, over, over, over}, []bool{false, false, false, false, false, true}},
		{"out over its own threshold", []Traffic{{Running: true, OutBps: 21e6}, {Running: true, OutBps: 21e6}, {Running: true, OutBps: 21e6}}, []bool{false, false, true}},
		{"a stopped capture never fires", []Traffic{{InBps: 99e6}, {InBps: 99e6}, {InBps: 99e6}}, []bool{false, false, false}},
	}
	for _, tt := range tests {
		var r BW
		var got []bool
		for _, in := range tt.input {
			_, ok := r.Eval(in, cfg)
			got = append(got, ok)
		}
		if diff := cmp.Diff(got, tt.fires); diff != "" {
			t.Errorf("%s (-got, +want):\n%s", tt.desc, diff)
		}
	}
	var r BW
	for range 2 {
		r.Eval(Traffic{Running: true, OutBps: 25e6}, cfg)
	}
	a, _ := r.Eval(Traffic{Running: true, OutBps: 25e6}, cfg)
	want := Alert{Kind: "bw", Key: "hub|out", Severity: 5, Message: "bandwidth out 25.0 Mbit/s over 20.0 Mbit/s for 3 s"}
	if diff := cmp.Diff(a, want); diff != "" {
		t.Errorf("alert (-got, +want):\n%s", diff)
	}
}

func TestPort(t *testing.T) {
	var r Port
	r.SetPorts([]int{4444, 65535, 0, 70000})
	inv := Inventory{AgentID: 7, Site: "a", Conns: []Conn{
		{RemoteIP: "198.51.100.1", RemotePort: 443, Process: "curl"},
		{RemoteIP: "198.51.100.2", RemotePort: 4444, Process: "nc"},
		{RemoteIP: "198.51.100.3", RemotePort: 65535},
	}}
	got := r.Eval(inv, nil)
	want := []Alert{
		{Kind: "port", Key: "7|198.51.100.2:4444", Severity: 9, Site: "a", AgentID: 7, Process: "nc", Message: "agent 7: nc connected to suspicious port 4444 on 198.51.100.2"},
		{Kind: "port", Key: "7|198.51.100.3:65535", Severity: 9, Site: "a", AgentID: 7, Message: "agent 7: unknown process connected to suspicious port 65535 on 198.51.100.3"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
	r.SetPorts(nil)
	if got := r.Eval(inv, nil); len(got) != 0 {
		t.Errorf("empty list fired: %v", got)
	}
}

func TestProc(t *testing.T) {
	var r Proc
	inv := func(agent int64, procs ...string) Inventory {
		in := Inventory{AgentID: agent}
		for _, p := range procs {
			in.Conns = append(in.Conns, Conn{Process: p})
		}
		return in
	}
	ignore := map[string]bool{"chrome": true}
	tests := []struct {
		desc string
		inv  Inventory
		want []string // keys
	}{
		{"the first run of a host builds its seen-table silently", inv(1, "sshd", "curl"), nil},
		{"nothing new", inv(1, "curl", "sshd"), nil},
		{"a new process fires once", inv(1, "sshd", "nc", "nc"), []string{"1|nc"}},
		{"then it is known", inv(1, "nc"), nil},
		{"ignored names never fire", inv(1, "chrome"), nil},
		{"unknown names are skipped", inv(1, ""), nil},
		{"another host has its own first run", inv(2, "nc"), nil},
		{"and then fires for itself", inv(2, "nc", "socat"), []string{"2|socat"}},
	}
	for _, tt := range tests {
		var got []string
		for _, a := range r.Eval(tt.inv, ignore, nil) {
			got = append(got, a.Key)
			if want := a.Key[strings.IndexByte(a.Key, '|')+1:]; a.Process != want {
				t.Errorf("%s: alert %s is about process %q, want %q", tt.desc, a.Key, a.Process, want)
			}
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s (-got, +want):\n%s", tt.desc, diff)
		}
	}
}

func TestTarget(t *testing.T) {
	var r Target
	steps := []struct {
		desc string
		eps  []Endpoint
		want []string
	}{
		{"under the threshold", []Endpoint{{IP: "192.0.2.1", Total: 9_000_000}}, nil},
		{"reaching it fires", []Endpoint{{IP: "192.0.2.1", Total: 10_000_000}, {IP: "192.0.2.2", Total: 1}}, []string{"192.0.2.1"}},
		{"only the first time", []Endpoint{{IP: "192.0.2.1", Total: 50_000_000}}, nil},
	}
	for _, st := range steps {
		var got []string
		for _, a := range r.Eval(Traffic{Running: true, Endpoints: st.eps}, 10, nil) {
			got = append(got, a.Key)
		}
		if diff := cmp.Diff(got, st.want); diff != "" {
			t.Errorf("%s (-got, +want):\n%s", st.desc, diff)
		}
	}
}

func TestIface(t *testing.T) {
	var r Iface
	cfg := IfaceConfig{WarnPct: 70, CritPct: 90, SustainSec: 300}
	t0 := time.Unix(1_800_000_000, 0)
	rate := func(pct float64) []IfaceRate {
		return []IfaceRate{{AgentID: 3, Name: "eth0", SpeedBps: 1e9, InBps: pct / 100 * 1e9}, {AgentID: 3, Name: "nospeed", InBps: 1e12}}
	}
	steps := []struct {
		desc string
		at   time.Duration
		pct  float64
		want string // "" none, else severity:message
	}{
		{"warn level starts", 0, 75, ""},
		{"not sustained yet", 299 * time.Second, 80, ""},
		{"sustained warn", 300 * time.Second, 80, "5:interface eth0 at 80% utilisation (warn) for 5m0s"},
		{"crit starts, warn still sustained", 400 * time.Second, 95, "5:interface eth0 at 95% utilisation (warn) for 6m40s"},
		{"crit sustained", 700 * time.Second, 95, "7:interface eth0 at 95% utilisation (crit) for 5m0s"},
		{"drop below resets", 701 * time.Second, 10, ""},
		{"and warn must be sustained again", 1000 * time.Second, 75, ""},
	}
	for _, st := range steps {
		got := ""
		for _, a := range r.Eval(t0.Add(st.at), rate(st.pct), cfg, nil) {
			got = string(rune('0'+a.Severity)) + ":" + a.Message
			if a.Key != "3|eth0" || a.Kind != "iface_util" {
				t.Errorf("%s: key %s kind %s", st.desc, a.Key, a.Kind)
			}
		}
		if got != st.want {
			t.Errorf("%s: got %q, want %q", st.desc, got, st.want)
		}
	}
}

type listMatcher struct {
	gen   int64
	names map[string]int
}

func (m *listMatcher) MatchName(n string) (IOCHit, bool) {
	for {
		if line, ok := m.names[n]; ok {
			return IOCHit{Entry: n, List: "ioc.txt", Line: line}, true
		}
		i := strings.IndexByte(n, '.')
		if i < 0 {
			return IOCHit{}, false
		}
		n = n[i+1:]
	}
}

func (m *listMatcher) Generation() int64 { return m.gen }

// TestIOC: a listed name (or subdomain) raises once per new report, keyed
// <agent>|<listed entry>; a reload judges seen names again.
func TestIOC(t *testing.T) {
	m := &listMatcher{gen: 1, names: map[string]int{"evil.test": 3}}
	var r IOC
	names := []Name{
		{AgentID: 7, Site: "a", Name: "x.evil.test", Source: "dns", TS: 60},
		{AgentID: 7, Site: "a", Name: "clean.example", Source: "tls", TS: 60},
		{AgentID: 0, Name: "evil.test", Source: "dns", TS: 2},
	}
	got := r.Eval(names, m, nil)
	want := []Alert{
		{Kind: "ioc", Key: "7|evil.test", Severity: 8, Site: "a", AgentID: 7, Message: `agent 7 saw DNS name "x.evil.test": listed as evil.test in ioc.txt line 3`, Count: 1},
		{Kind: "ioc", Key: "0|evil.test", Severity: 8, Message: `the hub capture saw DNS name "evil.test": listed as evil.test in ioc.txt line 3`, Count: 1},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("first cycle (-got, +want):\n%s", diff)
	}
	if got := r.Eval(names, m, nil); len(got) != 0 {
		t.Fatalf("the same reports raised again: %+v", got)
	}
	names[0].TS = 120
	if got := r.Eval(names, m, nil); len(got) != 1 || got[0].Key != "7|evil.test" {
		t.Fatalf("a new report: %+v", got)
	}
	m.names["clean.example"], m.gen = 9, 2
	got = r.Eval(names, m, nil)
	if len(got) != 3 || got[1].Key != "7|clean.example" || got[1].Message != `agent 7 saw TLS SNI "clean.example": listed as clean.example in ioc.txt line 9` {
		t.Fatalf("after a reload: %+v", got)
	}
}

// TestIOCGroupsPerListedEntry: 20 000 distinct subdomains of one listed
// domain from one agent are one alert keyed on the listed entry, counting
// every name and naming the first five; another agent's hit on the same
// entry and the same agent's hit on another entry are alerts of their own.
func TestIOCGroupsPerListedEntry(t *testing.T) {
	m := &listMatcher{gen: 1, names: map[string]int{"evil.test": 3, "bad.example": 4}}
	var names []Name
	for i := range 20000 {
		names = append(names, Name{AgentID: 7, Site: "a", Name: fmt.Sprintf("h%d.evil.test", i), Source: "dns", TS: 60})
	}
	names = append(names, Name{AgentID: 8, Site: "b", Name: "c2.evil.test", Source: "tls", TS: 60},
		Name{AgentID: 7, Site: "a", Name: "bad.example", Source: "http", TS: 60})
	var r IOC
	got := r.Eval(names, m, nil)
	want := []Alert{
		{Kind: "ioc", Key: "7|evil.test", Severity: 8, Site: "a", AgentID: 7, Count: 20000,
			Message: `agent 7 saw 20000 names listed as evil.test in ioc.txt line 3: DNS name "h0.evil.test", DNS name "h1.evil.test", ` +
				`DNS name "h2.evil.test", DNS name "h3.evil.test", DNS name "h4.evil.test" and 19 995 more`},
		{Kind: "ioc", Key: "8|evil.test", Severity: 8, Site: "b", AgentID: 8, Count: 1,
			Message: `agent 8 saw TLS SNI "c2.evil.test": listed as evil.test in ioc.txt line 3`},
		{Kind: "ioc", Key: "7|bad.example", Severity: 8, Site: "a", AgentID: 7, Count: 1,
			Message: `agent 7 saw HTTP Host "bad.example": listed as bad.example in ioc.txt line 4`},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("(-got, +want):\n%s", diff)
	}
	// Three new reports of the storm's names in the next minute: one
	// alert counting three.
	for i := range 3 {
		names[i].TS = 120
	}
	if got := r.Eval(names, m, nil); len(got) != 1 || got[0].Key != "7|evil.test" || got[0].Count != 3 {
		t.Fatalf("next minute: %+v", got)
	}
}

func TestThousands(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1 000"}, {19999, "19 999"}, {1234567, "1 234 567"}, {-1000, "-1 000"}} {
		if got := Thousands(c.n); got != c.want {
			t.Errorf("Thousands(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
