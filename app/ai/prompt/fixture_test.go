package prompt

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/records.jsonl")

// record is one line of testdata/records.jsonl: the identifying values
// of one observed host and a syslog line that carries them all.
type record struct {
	IP4  string `json:"ip4"`
	IP6  string `json:"ip6"`
	MAC  string `json:"mac"`
	User string `json:"user"`
	Host string `json:"host"`
	FQDN string `json:"fqdn"`
	Line string `json:"line"`
}

const recordsFile = "testdata/records.jsonl"

// genRecords builds the fixture from a fixed seed. Each value is
// distinct and written under one spelling in the whole file, so Reveal
// must give back the exact text. The IPv6 forms rotate: compressed,
// IPv4-mapped (::ffff:192.0.2.N), link-local with a zone id, upper case
// with a zero group; the MAC forms rotate: colon, dash, Cisco dot.
func genRecords() []record {
	r := rand.New(rand.NewPCG(32, 2026))
	users := []string{"jkowalski", "mmeier", "adupont", "lrossi", "sgarcia", "tnguyen", "ebrown", "hschmidt"}
	out := make([]record, 1000)
	for i := range out {
		var ip6 string
		switch i % 4 {
		case 0:
			ip6 = fmt.Sprintf("2001:db8::%x", i+1)
		case 1:
			ip6 = fmt.Sprintf("::ffff:192.0.2.%d", i/4+1)
		case 2:
			ip6 = fmt.Sprintf("fe80::%x:%x%%eth%d", r.IntN(0xffff)+1, i, i%3)
		case 3:
			ip6 = fmt.Sprintf("2001:DB8:0:%X::1", i)
		}
		m := [6]byte{0x02, byte(i >> 8), byte(i), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))}
		var mac string
		switch i % 3 {
		case 0:
			mac = fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
		case 1:
			mac = fmt.Sprintf("%02X-%02X-%02X-%02X-%02X-%02X", m[0], m[1], m[2], m[3], m[4], m[5])
		case 2:
			mac = fmt.Sprintf("%02x%02x.%02x%02x.%02x%02x", m[0], m[1], m[2], m[3], m[4], m[5])
		}
		ip4 := fmt.Sprintf("10.%d.%d.%d", i/250, i%250, r.IntN(254)+1)
		if i%5 == 0 {
			ip4 = fmt.Sprintf("198.51.100.%d", i/5%254+1)
		}
		rec := record{
			IP4: ip4, IP6: ip6, MAC: mac,
			User: fmt.Sprintf("%s%03d", users[i%len(users)], i),
			Host: fmt.Sprintf("ws-%04d", i),
			FQDN: fmt.Sprintf("srv%04d.corp.example", i),
		}
		rec.Line = fmt.Sprintf("sshd[%d]: Accepted publickey for %s from %s port %d ssh2 on %s (%s) hw %s v6 %s",
			1000+i, rec.User, rec.IP4, 40000+i, rec.Host, rec.FQDN, rec.MAC, rec.IP6)
		out[i] = rec
	}
	return out
}

func loadRecords(t testing.TB) []record {
	t.Helper()
	if *update {
		var b strings.Builder
		for _, r := range genRecords() {
			j, _ := json.Marshal(r)
			b.Write(j)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(recordsFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(recordsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if len(out) != 1000 {
		t.Fatalf("%s: %d records, want 1000 (go test -run Fixture -update)", recordsFile, len(out))
	}
	return out
}

// recordFacts turns records into facts the way the context builder
// will: the agent's names registered first, the trusted text naming the
// host, the untrusted values quoted.
func recordFacts(recs []record, ps *Pseudonyms) []Fact {
	facts := make([]Fact, len(recs))
	for i, r := range recs {
		if ps != nil {
			ps.AddHost(r.Host, r.FQDN)
			ps.AddUser(r.User)
		}
		facts[i] = Fact{
			Source:   "syslog:events",
			Text:     "Login on agent " + r.Host + " by " + r.User,
			Priority: i % 10,
			Data: []Field{
				{Name: "line", Value: r.Line},
				{Name: "src", Value: r.IP4},
				{Name: "src6", Value: r.IP6},
				{Name: "mac", Value: r.MAC},
				{Name: "fqdn", Value: r.FQDN},
			},
		}
	}
	return facts
}

// TestFixtureNothingLeaks: over the 1 000 records, the assembled bytes
// contain none of the values (each grepped, IPv6 also in its canonical
// form, case-insensitively), and revealing the user message gives back
// exactly the message assembled without pseudonyms.
func TestFixtureNothingLeaks(t *testing.T) {
	recs := loadRecords(t)
	if got := genRecords(); got[999] != recs[999] {
		t.Fatalf("fixture differs from its generator: %+v vs %+v", recs[999], got[999])
	}
	ps := New()
	ps.AddDomain("corp.example")
	fence := fenceOf("0123456789abcdef")
	c, err := build(SystemPrompt, recordFacts(recs, ps), 4<<20, ps, fence)
	if err != nil {
		t.Fatal(err)
	}
	if c.Included != 1000 || c.Omitted != 0 {
		t.Fatalf("included %d, omitted %d, want 1000, 0", c.Included, c.Omitted)
	}
	sent := strings.ToLower(string(c.Bytes))
	for _, r := range recs {
		vals := []string{r.IP4, r.IP6, r.MAC, r.User, r.Host, r.FQDN}
		if a, err := netip.ParseAddr(r.IP6); err == nil {
			vals = append(vals, a.String(), a.WithZone("").String())
		}
		for _, v := range vals {
			if strings.Contains(sent, strings.ToLower(v)) {
				t.Fatalf("%q reached the provider bytes", v)
			}
		}
	}
	plain, err := build(SystemPrompt, recordFacts(recs, nil), 4<<20, nil, fence)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ps.Reveal(c.Messages[0].Content), plain.Messages[0].Content; got != want {
		t.Fatalf("Reveal differs from the plain message at byte %d", firstDiff(got, want))
	}
	if ps.aliases != 0 {
		t.Fatalf("%d values met under two spellings; the fixture has one spelling each", ps.aliases)
	}
	// 1 000 of each kind, plus nothing else: every value got its own token.
	count := map[string]int{}
	for _, m := range ps.Mappings() {
		count[m.Kind]++
	}
	want := map[string]int{KindIP: 1000, KindIP6: 1000, KindMAC: 1000, KindUser: 1000, KindHost: 2000}
	if fmt.Sprint(count) != fmt.Sprint(want) {
		t.Fatalf("tokens per kind %v, want %v", count, want)
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
