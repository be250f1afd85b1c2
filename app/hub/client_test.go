package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"netmon/app/config"
	"netmon/app/logging"
)

// logBuffer collects a hub's log for tests that grep it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testHub is a running hub with its log.
type testHub struct {
	*Hub
	base string
	logs *logBuffer
}

// startTestHub starts a hub on dsn with a fresh vault key, debug JSON
// logs captured, after mutate adjusts the configuration.
func startTestHub(t *testing.T, dsn string, mutate func(*config.HubConfig)) *testHub {
	t.Helper()
	return startTestHubWith(t, dsn, mutate, nil)
}

// startTestHubWith is startTestHub with a hook on the hub before Start.
func startTestHubWith(t *testing.T, dsn string, mutate func(*config.HubConfig), before func(*Hub)) *testHub {
	t.Helper()
	cfg := config.DefaultHubConfig()
	cfg.Store.DSN, cfg.Server.Port = dsn, 0
	cfg.Vault.File = filepath.Join(t.TempDir(), "vault.key")
	cfg.Record.Dir = filepath.Join(t.TempDir(), "captures")
	cfg.Geo.Dir = filepath.Join(t.TempDir(), "geoip")
	cfg.Geo.Online = false // tests never call out
	// Test hubs observe only what their test made: the machine's own
	// sockets (other jobs' connections) would show up as agent 0 in the
	// alert rules. The one test of the host inventory turns it back on.
	cfg.Capture.HostConns = false
	if mutate != nil {
		mutate(&cfg)
	}
	logs := &logBuffer{}
	log, err := logging.New(logs, "json", "debug")
	if err != nil {
		t.Fatal(err)
	}
	var opts []Option
	if before != nil {
		opts = append(opts, before)
	}
	h, err := newStarted(log, cfg, opts...)
	if err != nil {
		t.Fatalf("start hub: %v\n%s", err, logs)
	}
	t.Cleanup(func() { _ = h.Stop(context.Background()) })
	return &testHub{Hub: h, base: fmt.Sprintf("http://127.0.0.1:%d", h.Addr().(*net.TCPAddr).Port), logs: logs}
}

// client is a browser- or script-like caller of one hub.
type client struct {
	t       *testing.T
	base    string
	bearer  string
	cookie  string            // nm_session value
	headers map[string]string // sent with every request
}

func (h *testHub) client(t *testing.T) *client {
	return &client{t: t, base: h.base, headers: map[string]string{}}
}

type response struct {
	code    int
	header  http.Header
	body    string
	cookies []*http.Cookie
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// call sends a request; body is marshalled to JSON unless it is a string.
func (c *client) call(method, path string, body any) response {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if c.cookie != "" {
		req.AddCookie(&http.Cookie{Name: "nm_session", Value: c.cookie})
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{code: resp.StatusCode, header: resp.Header, body: strings.TrimSpace(string(raw)), cookies: resp.Cookies()}
}

// must fails the test unless the response has status code.
func (r response) must(t *testing.T, code int) response {
	t.Helper()
	if r.code != code {
		t.Fatalf("status %d, want %d; body %s", r.code, code, r.body)
	}
	return r
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
}

// login signs c in and keeps the cookie; returns the token.
func (c *client) login(username, password string) string {
	c.t.Helper()
	body := map[string]string{"password": password}
	if username != "" {
		body["username"] = username
	}
	r := c.call("POST", "/api/login", body).must(c.t, 200)
	var out struct {
		OK    bool   `json:"ok"`
		Token string `json:"token"`
	}
	r.decode(c.t, &out)
	c.cookie = out.Token
	return out.Token
}

// createUser makes a user through the API as c.
func (c *client) createUser(name, password, role, site string) int64 {
	c.t.Helper()
	r := c.call("POST", "/api/v1/users", map[string]string{"username": name, "password": password, "role": role, "site": site}).must(c.t, 200)
	var u struct {
		ID int64 `json:"id"`
	}
	r.decode(c.t, &u)
	return u.ID
}

// storetestSQLite is a fresh SQLite path, for tests that need only one engine.
func storetestSQLite(t *testing.T) string {
	return filepath.Join(t.TempDir(), "netmon.db")
}

// updateDirect disables a user straight in the database, as an operator
// with database access (or the admin CLI) could, bypassing the API's
// last-admin guard: the break-glass situation.
func updateDirect(ctx context.Context, h *testHub, id int64) (int64, string, error) {
	_, err := h.db.Writer().ExecContext(ctx, `UPDATE users SET enabled = FALSE WHERE id = $1`, id)
	return id, "", err
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newStarted builds a hub and starts it; the error is New's or Start's.
func newStarted(log *slog.Logger, cfg config.HubConfig, opts ...Option) (*Hub, error) {
	h, err := New(context.Background(), log, cfg, opts...)
	if err != nil {
		return nil, err
	}
	return h, h.Start(context.Background())
}

// udpAddr is the listen address of a collector on port.
func udpAddr(port int) string { return ":" + strconv.Itoa(port) }
