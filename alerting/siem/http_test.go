package siem

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTPTransport: the bare line POSTed, Authorization verbatim when a
// token is set, TLS verified unless insecure, a non-2xx reported by its
// status without the remote body.
func TestHTTPTransport(t *testing.T) {
	type got struct{ method, path, auth, ctype, body string }
	var last got
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		last = got{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)}
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("remote secret body"))
		}
	})
	plain := httptest.NewServer(h)
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(h)
	defer tlsSrv.Close()
	ctx := context.Background()
	cef, _ := Format(FormatCEF, portEvent)

	f := New(Config{Transport: TransportHTTP, Target: plain.URL + "/ingest", Token: "Splunk abc"}, loopback)
	if err := f.Send(ctx, portEvent); err != nil {
		t.Fatal(err)
	}
	if want := (got{"POST", "/ingest", "Splunk abc", "text/plain; charset=utf-8", cef}); last != want {
		t.Errorf("request %+v, want %+v", last, want)
	}
	js, _ := Format(FormatJSON, portEvent)
	f = New(Config{Format: FormatJSON, Transport: TransportHTTP, Target: plain.URL + "/ingest"}, loopback)
	if err := f.Send(ctx, portEvent); err != nil {
		t.Fatal(err)
	}
	if want := (got{"POST", "/ingest", "", "application/json", js}); last != want {
		t.Errorf("request %+v, want %+v", last, want)
	}
	err := New(Config{Transport: TransportHTTP, Target: plain.URL + "/fail"}, loopback).Send(ctx, portEvent)
	if err == nil || err.Error() != "remote answered 403 forbidden" {
		t.Errorf("403: %v", err)
	}
	if err := New(Config{Transport: TransportHTTP, Target: tlsSrv.URL + "/x"}, loopback).Send(ctx, portEvent); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("self-signed without insecure: %v, want a certificate error", err)
	}
	if err := New(Config{Transport: TransportHTTP, Target: tlsSrv.URL + "/x", Insecure: true}, loopback).Send(ctx, portEvent); err != nil {
		t.Errorf("insecure: %v", err)
	}
}
