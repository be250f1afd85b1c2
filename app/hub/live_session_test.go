package hub

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"netmon/app/config"
	"netmon/app/live"
	"netmon/store/storetest"
)

// feed is an open /ws connection of a test.
type feed struct {
	t    *testing.T
	name string
	conn *websocket.Conn
}

func openFeed(t *testing.T, base, name, token string) *feed {
	t.Helper()
	hdr := http.Header{"Authorization": {"Bearer " + token}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatalf("%s: dial /ws: %v", name, err)
	}
	conn.SetReadLimit(8 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	f := &feed{t: t, name: name, conn: conn}
	f.alive()
	return f
}

// alive reads one tick.
func (f *feed) alive() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, _, err := f.conn.Read(ctx); err != nil {
		f.t.Fatalf("%s: the feed stopped: %v", f.name, err)
	}
}

// ended reads until the hub closes the socket; it must close with 4001
// within two ticks of since.
func (f *feed) ended(since time.Time) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ticks := 0
	for {
		_, _, err := f.conn.Read(ctx)
		if err == nil {
			ticks++
			continue
		}
		if code := websocket.CloseStatus(err); code != live.CloseSessionEnded {
			f.t.Errorf("%s: closed with %v (%v), want %d (session ended)", f.name, code, err, live.CloseSessionEnded)
		}
		if took := time.Since(since); took > 2*time.Second || ticks > 2 {
			f.t.Errorf("%s: closed %v and %d ticks after the session ended, want within a tick", f.name, took, ticks)
		}
		return
	}
}

// TestLiveFeedEndsWithItsSession is the hardening issue's fourth finding:
// after logout (121 ticks in 121 s) or an admin disabling the user (9
// ticks), /ws kept sending. Each way a session or token ends closes its
// sockets within a tick, and nobody else's.
func TestLiveFeedEndsWithItsSession(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := bootstrap(t, dsn)
		adminFeed := openFeed(t, h.base, "admin", admin.cookie)
		id := admin.createUser("vic", "vic-pass-1234", "viewer", "")
		login := func() *client {
			c := h.client(t)
			c.login("vic", "vic-pass-1234")
			return c
		}
		vic1, vic2 := login(), login()
		f1, f2 := openFeed(t, h.base, "vic session 1", vic1.cookie), openFeed(t, h.base, "vic session 2", vic2.cookie)

		at := time.Now()
		vic1.call("POST", "/api/logout", nil).must(t, 200)
		f1.ended(at)
		f2.alive()

		at = time.Now()
		admin.call("PUT", fmt.Sprintf("/api/v1/users/%d", id), map[string]any{"password": "vic-pass-5678"}).must(t, 200)
		f2.ended(at)

		vic3 := h.client(t)
		vic3.login("vic", "vic-pass-5678")
		f3 := openFeed(t, h.base, "vic session 3", vic3.cookie)
		at = time.Now()
		admin.call("PUT", fmt.Sprintf("/api/v1/users/%d", id), map[string]any{"enabled": false}).must(t, 200)
		f3.ended(at)

		var tok struct {
			ID    int64  `json:"id"`
			Token string `json:"token"`
		}
		admin.call("POST", "/api/v1/tokens", map[string]string{"name": "wall", "role": "viewer"}).must(t, 200).decode(t, &tok)
		f4 := openFeed(t, h.base, "api token", tok.Token)
		at = time.Now()
		admin.call("DELETE", fmt.Sprintf("/api/v1/tokens/%d", tok.ID), nil).must(t, 200)
		f4.ended(at)

		admin.call("PUT", fmt.Sprintf("/api/v1/users/%d", id), map[string]any{"enabled": true}).must(t, 200)
		vic5 := h.client(t)
		vic5.login("vic", "vic-pass-5678")
		f5 := openFeed(t, h.base, "vic session 5", vic5.cookie)
		at = time.Now()
		admin.call("DELETE", fmt.Sprintf("/api/v1/users/%d", id), nil).must(t, 200)
		f5.ended(at)

		adminFeed.alive()
	})
}

// TestLiveFeedEndsOnEveryHub: with -session-store=db, a logout on hub A
// closes the socket the same session holds on hub B.
func TestLiveFeedEndsOnEveryHub(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	key := filepath.Join(t.TempDir(), "vault.key")
	shared := func(c *config.HubConfig) {
		c.Auth.Password = "bootstrap-secret-1"
		c.Auth.SessionStore = "db"
		c.Vault.File = key
		c.Retention.Enabled = false
	}
	a := startTestHub(t, dsn, shared)
	b := startTestHub(t, dsn, shared)
	onA := a.client(t)
	tok := onA.login("", "bootstrap-secret-1")
	other := b.client(t)
	otherTok := other.login("", "bootstrap-secret-1")
	onB := openFeed(t, b.base, "session on hub B", tok)
	keep := openFeed(t, b.base, "another session on hub B", otherTok)
	at := time.Now()
	onA.call("POST", "/api/logout", nil).must(t, 200)
	onB.ended(at)
	keep.alive()
}

// TestLiveFeedEndsAfterLogoutBinary is the report's reproduction against
// the hub binary: after logout, /ws stops within a tick (it sent 121 ticks
// in 121 s).
func TestLiveFeedEndsAfterLogoutBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the hub binary")
	}
	base, _ := startLimitedHub(t, 0)
	tok := loginBinary(t, base)
	f := openFeed(t, base, "legacy session", tok)
	req, _ := http.NewRequest(http.MethodPost, base+"/api/logout", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	at := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("logout: %v %v", err, resp)
	}
	resp.Body.Close()
	f.ended(at)
}
