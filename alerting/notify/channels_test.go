package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store/record"
	"netmon/store/storetest"
)

// verifyV2 is what a receiver does (the README's example): recompute
// the HMAC over the timestamp and the exact bytes received.
func verifyV2(secret, ts string, body []byte, sig string) bool {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return hmac.Equal([]byte(sig), []byte("sha256="+hex.EncodeToString(m.Sum(nil))))
}

// TestHTTPChannels routes one event to every HTTP channel of local
// receivers and checks each request exactly: method, path, headers and
// JSON body.
func TestHTTPChannels(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	db := storetest.OpenSQLite(t)
	cfg := testConfig()
	cfg.MessengerBaseURL = srv.URL + "/tg"
	box := newBox(Settings{
		GenericURL:     srv.URL + "/generic",
		Chatapp1URL:    srv.URL + "/chat1/T000/B000/XXXX",
		Chatapp2URL:    srv.URL + "/chat2/123/tok",
		MessengerToken: "123:ABC", MessengerChatID: "-100200",
		TeamchatURL:  srv.URL + "/teamchat/hook",
		WebhookV2URL: srv.URL + "/v2", WebhookV2Secret: "s3cret",
	})
	n, reg := startNotifier(t, db, cfg, box, Deps{Now: func() time.Time { return fixed }})
	if !n.Offer(portEvent) {
		t.Fatal("Offer refused")
	}
	ds := waitDeliveries(t, db, record.DeliveryDelivered, 6, 10*time.Second)
	if len(ds) != 6 {
		t.Fatalf("%d deliveries, want 6", len(ds))
	}
	for _, d := range ds {
		if d.EventID != 42 || d.Attempts != 1 || d.Error != "" || d.Route != "" {
			t.Errorf("delivery %+v, want event 42 delivered at the first attempt by the default route", d)
		}
	}
	// Conservation: per channel, routed = delivered + failed (+ pending: none).
	for _, ch := range []string{GenericURL, Chatapp1, Chatapp2, Messenger, Teamchat, WebhookV2} {
		routed := testutil.ToFloat64(n.m.routed.WithLabelValues(ch))
		delivered := testutil.ToFloat64(n.m.results.WithLabelValues(ch, "delivered"))
		failed := testutil.ToFloat64(n.m.results.WithLabelValues(ch, "failed"))
		if routed != 1 || delivered+failed != routed {
			t.Errorf("%s: routed %v, delivered %v, failed %v", ch, routed, delivered, failed)
		}
	}
	if c, err := testutil.GatherAndCount(reg, "netmon_notify_routed_total"); err != nil || c != 6 {
		t.Errorf("netmon_notify_routed_total series %d (%v), want 6", c, err)
	}
	evJSON := `{"id":42,"ts":1764000000,"kind":"port","key":"agent1|203.0.113.9:4444","message":"connection to 203.0.113.9:4444","severity":9,"state":"firing","site":"paris","count":1,"group_id":0,"ext_ref":"","agent_id":3,"last_ts":1764000000,"resolved_ts":0,"process":""}`
	text := `[netmon] CRIT port: connection to 203.0.113.9:4444 (agent1|203.0.113.9:4444) site paris`
	want := map[string]string{
		"/generic":              evJSON,
		"/chat1/T000/B000/XXXX": `{"text":"` + text + `"}`,
		"/chat2/123/tok": `{"content":"` + text + `","embeds":[{"title":"Suspicious remote port","description":"connection to 203.0.113.9:4444","color":14090240,"timestamp":"2025-11-24T16:00:00Z","fields":[` +
			`{"name":"kind","value":"port","inline":true},{"name":"severity","value":"9","inline":true},{"name":"key","value":"agent1|203.0.113.9:4444","inline":false},{"name":"site","value":"paris","inline":true}]}]}`,
		"/tg/bot123:ABC/sendMessage": `{"chat_id":"-100200","text":"` + text + `"}`,
		"/teamchat/hook": `{"@type":"MessageCard","@context":"https://schema.org/extensions","summary":"` + text + `","themeColor":"D70000","title":"netmon: Suspicious remote port","text":"connection to 203.0.113.9:4444",` +
			`"sections":[{"facts":[{"name":"Kind","value":"port"},{"name":"Severity","value":"9"},{"name":"Key","value":"agent1|203.0.113.9:4444"},{"name":"Site","value":"paris"},{"name":"Fired","value":"2025-11-24T16:00:00Z"}]}]}`,
	}
	got := map[string]request{}
	for _, r := range rec.requests() {
		got[r.Path] = r
	}
	if len(got) != 6 {
		t.Errorf("receiver got %d distinct paths, want 6: %v", len(got), got)
	}
	for path, body := range want {
		r, ok := got[path]
		if !ok {
			t.Errorf("nothing posted to %s", path)
			continue
		}
		if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("User-Agent") != "netmon-notify/1" {
			t.Errorf("%s: %s Content-Type %q User-Agent %q", path, r.Method, r.Header.Get("Content-Type"), r.Header.Get("User-Agent"))
		}
		if string(r.Body) != body {
			t.Errorf("%s body:\n got %s\nwant %s", path, r.Body, body)
		}
	}
	v2, ok := got["/v2"]
	if !ok {
		t.Fatal("nothing posted to /v2")
	}
	wantV2 := `{"version":2,"delivery":` + strconv.FormatInt(deliveryOf(ds, WebhookV2), 10) + `,"event":` + evJSON + `}`
	if string(v2.Body) != wantV2 {
		t.Errorf("v2 body:\n got %s\nwant %s", v2.Body, wantV2)
	}
	ts := v2.Header.Get(TimestampHeader)
	if ts != "1764000000" {
		t.Errorf("%s = %q, want 1764000000", TimestampHeader, ts)
	}
	sig := v2.Header.Get(SignatureHeader)
	if !verifyV2("s3cret", ts, v2.Body, sig) {
		t.Errorf("signature %q does not verify", sig)
	}
	tampered := []byte(strings.Replace(string(v2.Body), `"severity":9`, `"severity":1`, 1))
	if verifyV2("s3cret", ts, tampered, sig) {
		t.Error("a tampered body verified")
	}
	if verifyV2("s3cret", "1764000001", v2.Body, sig) {
		t.Error("a replayed body with another timestamp verified")
	}
	if verifyV2("other", ts, v2.Body, sig) {
		t.Error("another secret verified")
	}
}

func deliveryOf(ds []record.AlertDelivery, ch string) int64 {
	for _, d := range ds {
		if d.Channel == ch {
			return d.ID
		}
	}
	return -1
}

// TestPermanentAndTest: a 404 fails at once (no retry), the log keeps
// the status but never the remote body; the test send reports the same.
func TestPermanentAndTest(t *testing.T) {
	rec := &recorder{status: 404}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	db := storetest.OpenSQLite(t)
	box := newBox(Settings{GenericURL: srv.URL + "/secret-path"})
	n, _ := startNotifier(t, db, testConfig(), box, Deps{})
	n.Offer(portEvent)
	ds := waitDeliveries(t, db, record.DeliveryFailed, 1, 10*time.Second)
	if d := ds[0]; d.Attempts != 1 || d.Error != "remote answered 404 not found" {
		t.Errorf("failed delivery %+v", d)
	}
	err := n.Test(context.Background(), GenericURL)
	if err == nil || err.Error() != "remote answered 404 not found" || !errors.Is(err, ErrPermanent) {
		t.Errorf("Test = %v", err)
	}
	if err := n.Test(context.Background(), Chatapp1); err == nil || err.Error() != "channel not configured" || !errors.Is(err, ErrDisabled) {
		t.Errorf("Test of an unconfigured channel = %v", err)
	}
	// A URL resolving to loopback without the allow-list: refused, permanent.
	n2 := New(storetest.Logger(t), testConfig(), Deps{Store: db, Settings: func() Settings { return Settings{GenericURL: strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} }}, nil)
	if err := n2.Test(context.Background(), GenericURL); err == nil || err.Error() != "destination refused by the outbound guard" || !errors.Is(err, ErrPermanent) {
		t.Errorf("Test to localhost without allow-list = %v", err)
	}
	if got := len(rec.requests()); got != 2 {
		t.Errorf("receiver got %d requests, want 2 (the delivery and the test)", got)
	}
}
