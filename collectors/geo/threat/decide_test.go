package threat

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecide(t *testing.T) {
	l, err := ParseList(strings.NewReader("evil.example\n203.0.113.66\n"))
	if err != nil {
		t.Fatal(err)
	}
	cats, err := ParseCategories(strings.NewReader("good.example trusted\n"))
	if err != nil {
		t.Fatal(err)
	}
	seen := []Resolved{{Domain: "cdn.evil.example", IPs: []string{"8.8.4.4"}}}
	none := netip.Addr{}
	tests := []struct {
		desc   string
		l      *List
		domain string
		addr   netip.Addr
		want   Verdict
	}{
		{desc: "nothing known", l: l, domain: "other.example", addr: netip.MustParseAddr("8.8.8.8"), want: Verdict{Reputation: RepUnknown}},
		{desc: "listed domain's subdomain", l: l, domain: "www.evil.example", addr: none,
			want: Verdict{Reputation: RepMalicious, DecidedBy: &Decision{Source: "ioc_list", Subject: "www.evil.example", Entry: "evil.example", Line: 1}}},
		{desc: "trusted category", l: l, domain: "a.good.example", addr: none,
			want: Verdict{Reputation: RepTrusted, DecidedBy: &Decision{Source: "category_list", Subject: "a.good.example", Entry: "good.example", Line: 1}}},
		{desc: "listed address", l: l, addr: netip.MustParseAddr("203.0.113.66"),
			want: Verdict{Reputation: RepMalicious, DecidedBy: &Decision{Source: "ioc_list", Subject: "203.0.113.66", Entry: "203.0.113.66", Line: 2}}},
		{desc: "address a listed domain resolved to", l: l, addr: netip.MustParseAddr("8.8.4.4"),
			want: Verdict{Reputation: RepSuspicious, DecidedBy: &Decision{Source: "capture_dns", Subject: "8.8.4.4", Entry: "evil.example", Line: 1}}},
		{desc: "private address", l: nil, addr: netip.MustParseAddr("10.1.2.3"),
			want: Verdict{Reputation: RepTrusted, DecidedBy: &Decision{Source: "builtin", Subject: "10.1.2.3", Entry: "non-global address"}}},
		{desc: "worst of domain and address wins", l: l, domain: "a.good.example", addr: netip.MustParseAddr("203.0.113.66"),
			want: Verdict{Reputation: RepMalicious, DecidedBy: &Decision{Source: "ioc_list", Subject: "203.0.113.66", Entry: "203.0.113.66", Line: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got := Decide(tt.l, cats, tt.domain, tt.addr, seen)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}
