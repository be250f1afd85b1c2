package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

func TestCheck(t *testing.T) {
	lan := []netip.Prefix{netip.MustParsePrefix("192.168.10.0/24"), netip.MustParsePrefix("169.254.0.0/16")}
	tests := []struct {
		desc  string
		allow []netip.Prefix
		addr  string
		class string // "" = allowed
	}{
		{"public IPv4", nil, "208.95.112.1:80", ""},
		{"public IPv6", nil, "[2606:4700::1]:443", ""},
		{"loopback", nil, "127.0.0.1:25", "loopback"},
		{"loopback /8", nil, "127.9.9.9:25", "loopback"},
		{"IPv6 loopback", nil, "[::1]:25", "loopback"},
		{"mapped loopback", nil, "[::ffff:127.0.0.1]:25", "loopback"},
		{"link-local", nil, "169.254.1.1:80", "link-local"},
		{"IPv6 link-local", nil, "[fe80::1]:80", "link-local"},
		{"metadata", nil, "169.254.169.254:80", "metadata"},
		{"IPv6 metadata", nil, "[fd00:ec2::254]:80", "metadata"},
		{"unspecified", nil, "0.0.0.0:80", "unspecified"},
		{"IPv6 unspecified", nil, "[::]:80", "unspecified"},
		{"private 10/8", nil, "10.0.0.5:587", "private"},
		{"private 172.16/12", nil, "172.20.1.1:587", "private"},
		{"private 192.168/16", nil, "192.168.10.5:587", "private"},
		{"ULA", nil, "[fd00::5]:514", "private"},
		{"CGNAT", nil, "100.64.0.1:80", "reserved"},
		{"multicast", nil, "239.1.1.1:80", "multicast"},
		// IPv6 forms that deliver to an IPv4 address are judged by it.
		{"NAT64 of loopback", nil, "[64:ff9b::7f00:1]:25", "loopback"},
		{"NAT64 of metadata", nil, "[64:ff9b::a9fe:a9fe]:80", "metadata"},
		{"NAT64 of a private address", nil, "[64:ff9b::a00:5]:587", "private"},
		{"NAT64 of a public address", nil, "[64:ff9b::d05f:7001]:80", ""},
		{"IPv4-compatible loopback", nil, "[::127.0.0.1]:25", "loopback"},
		{"IPv4-compatible private", nil, "[::192.168.1.1]:25", "private"},
		{"6to4 of loopback", nil, "[2002:7f00:1::1]:25", "loopback"},
		{"6to4 of metadata", nil, "[2002:a9fe:a9fe::1]:80", "metadata"},
		{"6to4 of a public address", nil, "[2002:d05f:7001::1]:80", ""},
		{"allow-list opens a LAN relay", lan, "192.168.10.5:587", ""},
		{"allow-list is exact about its range", lan, "192.168.11.5:587", "private"},
		{"allow-list never opens metadata", lan, "169.254.169.254:80", "metadata"},
		{"allow-list opens the rest of its range", lan, "169.254.1.1:80", ""},
		{"allow-list opens loopback when named", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, "127.0.0.1:514", ""},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			ap := netip.MustParseAddrPort(tc.addr)
			err := New(Config{Allow: tc.allow}).Check(ap)
			if tc.class == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want allowed", tc.addr, err)
				}
				return
			}
			if !errors.Is(err, ErrBlocked) {
				t.Fatalf("Check(%s) = %v, want ErrBlocked", tc.addr, err)
			}
			if got := Class(ap.Addr()); got != tc.class {
				t.Errorf("Class(%s) = %q, want %q", ap.Addr(), got, tc.class)
			}
		})
	}
}

func TestForURL(t *testing.T) {
	tests := []struct {
		desc, url, addr string
		ok              bool
	}{
		{"loopback behind a name", "http://ip-api.com/batch", "127.0.0.1:80", false},
		{"localhost is a name: no permission", "http://localhost:8080/batch", "127.0.0.1:8080", false},
		{"explicit loopback literal", "http://127.0.0.1:8080/batch", "127.0.0.1:8080", true},
		{"explicit literal allows that address only", "http://127.0.0.1:8080/batch", "127.0.0.2:8080", false},
		{"explicit literal allows its port only", "http://127.0.0.1:8080/batch", "127.0.0.1:22", false},
		{"default port of https", "https://10.1.2.3/batch", "10.1.2.3:443", true},
		{"explicit IPv6 literal", "http://[fd00::53]:80/batch", "[fd00::53]:80", true},
		{"explicit literal still allows public", "http://10.1.2.3/batch", "8.8.8.8:80", true},
		{"metadata is refused even when named", "http://169.254.169.254/latest", "169.254.169.254:80", false},
		{"IPv6 metadata is refused even when named", "http://[fd00:ec2::254]/", "[fd00:ec2::254]:80", false},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			g, err := New(DefaultConfig()).ForURL(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Check(netip.MustParseAddrPort(tc.addr)); (err == nil) != tc.ok {
				t.Errorf("Check(%s) for %s = %v, want allowed=%v", tc.addr, tc.url, err, tc.ok)
			}
		})
	}
	for _, bad := range []string{"ftp://x/", "file:///etc/passwd", "://x", "http://10.0.0.1:99999/"} {
		if _, err := New(DefaultConfig()).ForURL(bad); err == nil {
			t.Errorf("ForURL(%q) accepted", bad)
		}
	}
}

func TestParseAllow(t *testing.T) {
	got, err := ParseAllow(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8,")
	if err != nil {
		t.Fatal(err)
	}
	want := "[10.0.0.0/8 192.168.1.7/32 fd00::/8]"
	if s := fmtPrefixes(got); s != want {
		t.Errorf("ParseAllow = %s, want %s", s, want)
	}
	if _, err := ParseAllow("10.0.0.0/33"); err == nil {
		t.Error("a bad prefix was accepted")
	}
}

func fmtPrefixes(ps []netip.Prefix) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return "[" + strings.Join(s, " ") + "]"
}

// TestHTTPClient runs real listeners on 127.0.0.1: a name resolving to
// loopback, a redirect to the metadata address and a redirect to a
// private range are refused before connect; no packet leaves.
func TestHTTPClient(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer target.Close()
	redirect := func(to string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to, http.StatusFound)
		}))
	}
	toMeta := redirect("http://169.254.169.254/latest/meta-data/")
	defer toMeta.Close()
	toPrivate := redirect("http://10.255.255.1/x")
	defer toPrivate.Close()
	toTarget := redirect(target.URL + "/ok")
	defer toTarget.Close()
	loop := Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

	tests := []struct {
		desc    string
		cfg     Config
		get     string
		wantErr error
		hits    int32
	}{
		{"a name resolving to 127.0.0.1", DefaultConfig(), strings.Replace(target.URL, "127.0.0.1", "localhost", 1), ErrBlocked, 0},
		{"loopback literal without allow", DefaultConfig(), target.URL, ErrBlocked, 0},
		{"loopback allowed by the operator", loop, target.URL, nil, 1},
		{"redirect to 169.254.169.254", loop, toMeta.URL, ErrBlocked, 0},
		{"redirect to a private range", loop, toPrivate.URL, ErrBlocked, 0},
		{"redirect within the allowed range", loop, toTarget.URL, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			hits.Store(0)
			resp, err := New(tc.cfg).HTTPClient(ClientOptions{}).Get(tc.get)
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Get(%s) error %v, want %v", tc.get, err, tc.wantErr)
			}
			if n := hits.Load(); n != tc.hits {
				t.Errorf("target reached %d times, want %d", n, tc.hits)
			}
		})
	}
}

// TestRebinding: a DNS server on loopback answers a public address to
// the first question (a pre-check an application might do) and
// 127.0.0.1 to every later one. The client dials what the resolver
// answers at connect time, and the guard refuses it there.
func TestRebinding(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer target.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(target.URL, "http://"))

	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var asked atomic.Int32
	go serveRebindingDNS(pc, &asked)
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", pc.LocalAddr().String())
	}}

	// The "pre-check": the name looks public.
	addrs, err := resolver.LookupNetIP(context.Background(), "ip4", "rebind.example.test")
	if err != nil || len(addrs) != 1 || !IsGlobal(addrs[0]) {
		t.Fatalf("first answer %v %v, want one global address", addrs, err)
	}
	client := New(DefaultConfig()).HTTPClient(ClientOptions{Resolver: resolver})
	resp, err := client.Get("http://rebind.example.test:" + port + "/")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("Get after rebinding: %v, want ErrBlocked", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback target was reached %d times", n)
	}
	if asked.Load() < 2 {
		t.Errorf("resolver asked %d times, want the connect to resolve again", asked.Load())
	}
}

// serveRebindingDNS answers A questions: 93.184.215.14 first, 127.0.0.1
// afterwards; AAAA gets no answer.
func serveRebindingDNS(pc net.PacketConn, asked *atomic.Int32) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
		b.EnableCompression()
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		if q.Type == dnsmessage.TypeA {
			ip := [4]byte{127, 0, 0, 1}
			if asked.Add(1) == 1 {
				ip = [4]byte{93, 184, 215, 14}
			}
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}, dnsmessage.AResource{A: ip})
		}
		msg, err := b.Finish()
		if err == nil {
			_, _ = pc.WriteTo(msg, from)
		}
	}
}

// TestConfiguredControl: a polled device's own address passes whatever
// its class; a cloud metadata address never does.
func TestConfiguredControl(t *testing.T) {
	g := New(Config{})
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:161", true},
		{"10.1.2.3:161", true},
		{"192.168.1.1:443", true},
		{"8.8.8.8:161", true},
		{"[::1]:161", true},
		{"169.254.169.254:80", false},
		{"[fd00:ec2::254]:80", false},
		{"not an address", false},
	} {
		err := g.ConfiguredControl("udp", tc.addr, nil)
		if (err == nil) != tc.ok {
			t.Errorf("ConfiguredControl(%s) = %v, want allowed=%v", tc.addr, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrBlocked) {
			t.Errorf("ConfiguredControl(%s) = %v, want ErrBlocked", tc.addr, err)
		}
	}
}
