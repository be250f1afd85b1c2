package provider_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"netmon/app/ai/provider"
	pt "netmon/app/ai/provider/providertest"
)

// srvClose stops a fake's listener early (to test an address with
// nothing on it); the test's cleanup closing it again is harmless.
func srvClose(t *testing.T, srv *pt.Server) {
	t.Helper()
	srv.Close()
}

// TestCancelClosesConnection: a caller that cancels mid-stream (the
// console's user went away) closes the provider connection at once:
// the fake sees its client gone within 100 ms, for every kind, and
// Next reports canceled. Close does the same.
func TestCancelClosesConnection(t *testing.T) {
	for _, kind := range allKinds {
		for _, how := range []string{"cancel", "close"} {
			t.Run(kind+"/"+how, func(t *testing.T) {
				srv := pt.New(t, kind)
				srv.Push(pt.Script{Chunks: pt.Stream(kind, pt.Answer{Parts: []pt.Part{{Text: "first"}}, NoEnd: true}), Hold: true})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				s, err := newClient(t, srv, provider.Options{}).Chat(ctx, basicRequest())
				if err != nil {
					t.Fatal(err)
				}
				ev, err := s.Next()
				if err != nil || ev.Delta != "first" {
					t.Fatalf("first event: %+v %v", ev, err)
				}
				at := time.Now()
				if how == "cancel" {
					cancel()
				} else {
					s.Close()
				}
				select {
				case gone := <-srv.Gone():
					if d := gone.Sub(at); d > 100*time.Millisecond {
						t.Errorf("server saw the close after %s, want ≤ 100ms", d)
					}
				case <-time.After(2 * time.Second):
					t.Fatal("server never saw the connection close")
				}
				if _, err := s.Next(); provider.ClassOf(err) != provider.Canceled {
					t.Errorf("Next after %s: %v, want canceled", how, err)
				}
			})
		}
	}
}

// TestGuardedClient: an injected DialContext (the hub passes the
// outbound guard's) carries every connection, and its refusal is
// reported as unreachable.
func TestGuardedClient(t *testing.T) {
	srv := pt.New(t, "cloud-a")
	dials := 0
	allow := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials++
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	c, _ := provider.New(provider.CloudA, srv.URL, testKey, provider.Options{DialContext: allow})
	if _, err := c.Models(context.Background()); err != nil || dials != 1 {
		t.Fatalf("models through the dialer: %v, %d dials", err, dials)
	}
	refuse := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errRefused}
	}
	c, _ = provider.New(provider.CloudA, srv.URL, testKey, provider.Options{DialContext: refuse})
	_, err := c.Chat(context.Background(), basicRequest())
	if provider.ClassOf(err) != provider.Unreachable {
		t.Errorf("refused dial: %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want only the models one", n)
	}
	// An injected *http.Client's Timeout must not cut a long stream:
	// the call's own deadlines replace it.
	hc := &http.Client{Timeout: 50 * time.Millisecond}
	srv.Push(pt.Script{Chunks: pt.Stream("cloud-a", pt.Answer{Parts: []pt.Part{{Text: "a"}, {Text: "b", Delay: 150 * time.Millisecond}}})})
	c, _ = provider.New(provider.CloudA, srv.URL, testKey, provider.Options{HTTPClient: hc})
	s, err := c.Chat(context.Background(), basicRequest())
	if err != nil {
		t.Fatal(err)
	}
	if r := drain(t, s); r.err != nil || r.text() != "ab" {
		t.Errorf("stream longer than the client's Timeout: %q %v", r.text(), r.err)
	}
}

type refusedError struct{}

func (refusedError) Error() string { return "address refused by the outbound guard" }

var errRefused = refusedError{}
