package prompt

import (
	"encoding/json"
	"testing"
)

// newTestMap registers the names the tables use.
func newTestMap() *Pseudonyms {
	p := New()
	p.AddHost("db-01", "fw.corp.example")
	p.AddUser("alice")
	p.AddDomain("corp.example")
	return p
}

// TestPseudonymise pins what goes out for each form, one fresh map per
// row (so numbering starts at 1), and that Reveal gives the text back.
func TestPseudonymise(t *testing.T) {
	tests := []struct {
		desc, in, want string
		// aliased: a value repeats under another spelling, so Reveal
		// gives its first spelling (revealed holds the expected text).
		revealed string
	}{
		{"IPv4 with port and sentence dot", "from 10.0.0.1:443 to 10.0.0.2.", "from ip-1:443 to ip-2.", ""},
		{"IPv6 compressed in brackets", "[2001:db8::1]:80", "[ip6-1]:80", ""},
		{"IPv6 zone id goes with the address", "via fe80::1%eth0, up", "via ip6-1, up", ""},
		{"IPv4-mapped IPv6", "mapped ::ffff:192.0.2.1 and 192.0.2.1", "mapped ip6-1 and ip-1", ""},
		{"IPv6 prefix", "route 2001:db8::/32", "route ip6-1/32", ""},
		{"same address, two spellings, one token", "2001:db8::1 2001:DB8:0::1", "ip6-1 ip6-1", "2001:db8::1 2001:db8::1"},
		{"MAC in three forms of one device", "aa:bb:cc:dd:ee:ff AA-BB-CC-DD-EE-FF aabb.ccdd.eeff", "mac-1 mac-1 mac-1", "aa:bb:cc:dd:ee:ff aa:bb:cc:dd:ee:ff aa:bb:cc:dd:ee:ff"},
		{"eight-group colon value is IPv6, not a MAC", "aa:bb:cc:dd:ee:ff:00:11", "ip6-1", ""},
		{"registered user and host, UPN", "alice@db-01 and ALICE", "user-1@host-1 and user-1", "alice@db-01 and alice"},
		{"FQDN under registered domain", "srv9.corp.example fw.corp.example", "host-1 host-2", ""},
		{"dotted name with a registered host label", "db-01.other.example", "host-1", ""},
		{"private suffix", "nas.local printer.home.arpa", "host-1 host-2", ""},
		{"reverse DNS carries the address", "1.0.0.10.in-addr.arpa", "ip-1.in-addr.arpa", ""},
		{"address glued to letters taken whole", "abc10.1.2.3 x10.1.2.4y", "host-1 host-2", ""},
		{"interface prefix stays, address goes", "eth0:fe80::2", "eth0:ip6-1", ""},
		{"name glued to an address merged", "db-01::5", "host-2", ""},
		{"token-looking text escaped", "ip-1 host-9 tok-1", "tok-1 tok-2 tok-3", ""},
		{"kept: loopback, unspecified, netmask, OID, time, code, public domain", "127.0.0.1 ::1 0.0.0.0 255.255.255.0 1.3.6.1.2.1.1.5.0 12:34:56 std::string google.com",
			"127.0.0.1 ::1 0.0.0.0 255.255.255.0 1.3.6.1.2.1.1.5.0 12:34:56 std::string google.com", ""},
		{"public address goes", "dns 8.8.8.8", "dns ip-1", ""},
		{"unregistered plain host name kept", "nginx on web7", "nginx on web7", ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			p := newTestMap()
			got := p.Pseudonymise(tt.in)
			if got != tt.want {
				t.Fatalf("Pseudonymise(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			want := tt.in
			if tt.revealed != "" {
				want = tt.revealed
			}
			if back := p.Reveal(got); back != want {
				t.Fatalf("Reveal(%q) = %q, want %q", got, back, want)
			}
		})
	}
}

// TestMark: a value marked as a name becomes one token, spaces and all,
// and a single marked name is then found in other text.
func TestMark(t *testing.T) {
	p := New()
	fence := fenceOf("0123456789abcdef")
	q := Quote(fence, []Field{
		{Name: "sysname", Value: "Core Switch 1 (Bldg A)", Mark: KindHost},
		{Name: "agent", Value: "kiosk7", Mark: KindHost},
		{Name: "owner", Value: "Jane Doe", Mark: KindUser},
		{Name: "msg", Value: "kiosk7 rebooted by Jane Doe"},
	}, p)
	want := fence.Open + "\n" + `{"sysname":"host-1","agent":"host-2","owner":"user-1","msg":"host-2 rebooted by Jane Doe"}` + "\n" + fence.Close + "\n"
	if q != want {
		t.Fatalf("got\n%s\nwant\n%s", q, want)
	}
	// "Jane Doe" has a space: only a marked field hides it, free text
	// cannot (documented: register single names, mark whole ones).
	if got := p.Reveal("host-1 host-2 user-1"); got != "Core Switch 1 (Bldg A) kiosk7 Jane Doe" {
		t.Fatalf("Reveal: %q", got)
	}
}

// TestStable: the same value gets the same token across calls, distinct
// values distinct tokens, and the JSON round trip keeps the map, the
// registered names and the numbering.
func TestStable(t *testing.T) {
	p := newTestMap()
	a := p.Pseudonymise("10.0.0.1 talks to 10.0.0.2 as alice")
	b := p.Pseudonymise("alice again: 10.0.0.2 then 10.0.0.1")
	if a != "ip-1 talks to ip-2 as user-1" || b != "user-1 again: ip-2 then ip-1" {
		t.Fatalf("not stable: %q, %q", a, b)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q := New()
	if err := json.Unmarshal(raw, q); err != nil {
		t.Fatal(err)
	}
	if got := q.Pseudonymise("10.0.0.2 10.0.0.1 10.0.0.3 db-01 alice"); got != "ip-2 ip-1 ip-3 host-1 user-1" {
		t.Fatalf("after round trip: %q", got)
	}
	if got := q.Reveal("ip-1 and ip-2 and ip-9"); got != "10.0.0.1 and 10.0.0.2 and ip-9" {
		t.Fatalf("Reveal after round trip: %q", got)
	}
	if tok, ok := q.Token(KindIP, "10.0.0.1"); !ok || tok != "ip-1" {
		t.Fatalf("Token = %q, %v", tok, ok)
	}
	for _, bad := range []string{`{"version":2}`, `{"version":1,"entries":[{"token":"ip-x"}]}`, `{"version":1,"entries":[{"token":"ip-1"},{"token":"ip-1"}]}`} {
		if err := json.Unmarshal([]byte(bad), New()); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
