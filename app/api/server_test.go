package api

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScenarios(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, testRoutes)
	down, _ := newTestServer(t, &fakePinger{err: errors.New("dial tcp 10.0.0.5:5432: connection refused")}, nil)
	tests := []struct {
		desc       string
		srv        *Server
		req        request
		wantStatus int
		wantBody   string            // exact JSON, when set
		wantHeader map[string]string // exact header values
		wantIn     string            // substring of the body, when set
	}{
		{desc: "healthz", req: request{method: "GET", url: "/healthz"}, wantStatus: 200,
			wantBody: `{"version":"test","protocol_version":1}`},
		{desc: "readyz with database", req: request{method: "GET", url: "/readyz"}, wantStatus: 200,
			wantBody: `{"ready":true,"database":"ok"}`},
		{desc: "readyz without database hides the driver error", srv: down, req: request{method: "GET", url: "/readyz"}, wantStatus: 503,
			wantBody: `{"ready":false,"database":"unavailable","error":"the database does not answer"}`},
		{desc: "unknown api path is JSON 404", req: request{method: "GET", url: "/api/v1/nothing"}, wantStatus: 404,
			wantBody: `{"error":"no such endpoint: GET /api/v1/nothing (the list is at /api/docs)"}`},
		{desc: "bare /api is JSON 404", req: request{method: "GET", url: "/api"}, wantStatus: 404,
			wantBody: `{"error":"no such endpoint: GET /api (the list is at /api/docs)"}`},
		{desc: "trailing slash is not redirected", req: request{method: "GET", url: "/api/openapi.json/"}, wantStatus: 404,
			wantBody: `{"error":"no such endpoint: GET /api/openapi.json/ (the list is at /api/docs)"}`},
		{desc: "wrong method is 405 with Allow", req: request{method: "DELETE", url: "/healthz"}, wantStatus: 405,
			wantBody:   `{"error":"method DELETE not allowed on /healthz; allowed: GET"}`,
			wantHeader: map[string]string{"Allow": "GET"}},
		{desc: "UI shell for an unknown page", req: request{method: "GET", url: "/agents/12"}, wantStatus: 200,
			wantIn: "<title>netmon</title>", wantHeader: map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache"}},
		{desc: "POST outside the API is a 404, not the shell", req: request{method: "POST", url: "/agents"}, wantStatus: 404,
			wantBody: `{"error":"no such endpoint: POST /agents (the list is at /api/docs)"}`},
		{desc: "path traversal cannot leave the UI files", req: request{method: "GET", url: "/../../etc/passwd"}, wantStatus: 200,
			wantIn: "<title>netmon</title>"},
		{desc: "request id kept when well-formed", req: request{method: "GET", url: "/healthz", header: map[string]string{"X-Request-Id": "abc-123.x:y"}},
			wantStatus: 200, wantHeader: map[string]string{"X-Request-Id": "abc-123.x:y"}},
		{desc: "security headers", req: request{method: "GET", url: "/healthz"}, wantStatus: 200,
			wantHeader: map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"}},
		{desc: "API answers are not cached", req: request{method: "GET", url: "/api/auth/status"}, wantStatus: 200,
			wantHeader: map[string]string{"Cache-Control": "no-store", "Strict-Transport-Security": ""}},
		{desc: "API errors are not cached either", req: request{method: "GET", url: "/api/v1/nothing"}, wantStatus: 404,
			wantHeader: map[string]string{"Cache-Control": "no-store"}},
		{desc: "HSTS over TLS", req: request{method: "GET", url: "/healthz", tls: true}, wantStatus: 200,
			wantHeader: map[string]string{"Strict-Transport-Security": "max-age=31536000"}},
		{desc: "docs page", req: request{method: "GET", url: "/api/docs"}, wantStatus: 200,
			wantIn: `id="agentHello"`, wantHeader: map[string]string{"Content-Type": "text/html; charset=utf-8"}},
		{desc: "metrics is Prometheus text", req: request{method: "GET", url: "/metrics"}, wantStatus: 200,
			wantIn: "netmon_http_request_duration_seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			srv := tt.srv
			if srv == nil {
				srv = s
			}
			w := do(t, srv.Handler(), tt.req)
			if w.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", w.Code, tt.wantStatus, w.Body)
			}
			if tt.wantBody != "" {
				if diff := cmp.Diff(strings.TrimSpace(w.Body.String()), tt.wantBody); diff != "" {
					t.Errorf("body (-got, +want):\n%s", diff)
				}
			}
			if tt.wantIn != "" && !strings.Contains(w.Body.String(), tt.wantIn) {
				t.Errorf("body does not contain %q:\n%.400s", tt.wantIn, w.Body)
			}
			for k, v := range tt.wantHeader {
				if got := w.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if id := w.Header().Get("X-Request-Id"); id == "" {
				t.Error("no X-Request-Id in the response")
			}
		})
	}
}

func TestRequestIDReplacedWhenMalformed(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, nil)
	for _, bad := range []string{"has space", strings.Repeat("a", 129), "new\nline", "<script>"} {
		w := do(t, s.Handler(), request{method: "GET", url: "/healthz", header: map[string]string{"X-Request-Id": bad}})
		got := w.Header().Get("X-Request-Id")
		if got == bad || !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(got) {
			t.Errorf("X-Request-Id %q answered with %q, want a fresh 24-hex id", bad, got)
		}
	}
}

func TestBodies(t *testing.T) {
	s, logs := newTestServer(t, &fakePinger{}, testRoutes)
	big := `{"name":"` + strings.Repeat("x", 2000) + `"}`
	tests := []struct {
		desc, body  string
		contentType string
		chunked     bool
		wantStatus  int
		wantBody    string
	}{
		{desc: "valid", body: `{"name":"a","count":2}`, contentType: "application/json", wantStatus: 200, wantBody: `{"name":"a","count":2}`},
		{desc: "charset parameter accepted", body: `{"name":"a"}`, contentType: "application/json; charset=utf-8", wantStatus: 200, wantBody: `{"name":"a","count":0}`},
		{desc: "no content type is read as JSON", body: `{"name":"a"}`, wantStatus: 200, wantBody: `{"name":"a","count":0}`},
		{desc: "empty body", body: "", wantStatus: 400, wantBody: `{"error":"request body: empty; a JSON object is required"}`},
		{desc: "malformed JSON", body: `{"name":`, wantStatus: 400, wantBody: `{"error":"request body: invalid JSON: unexpected EOF"}`},
		{desc: "wrong field type", body: `{"count":"two"}`, wantStatus: 400, wantBody: `{"error":"request body: field \"count\" must be an integer"}`},
		{desc: "trailing data", body: `{"name":"a"} {}`, wantStatus: 400, wantBody: `{"error":"request body: unexpected data after the JSON value"}`},
		{desc: "trailing garbage", body: `{"name":"a"}garbage`, wantStatus: 400, wantBody: `{"error":"request body: unexpected data after the JSON value"}`},
		{desc: "trailing garbage after space", body: "{\"name\":\"a\"} \n x", wantStatus: 400, wantBody: `{"error":"request body: unexpected data after the JSON value"}`},
		{desc: "trailing white space", body: "{\"name\":\"a\"} \r\n\t", wantStatus: 200, wantBody: `{"name":"a","count":0}`},
		{desc: "array instead of object", body: `[1]`, wantStatus: 400, wantBody: `{"error":"request body: must be an object"}`},
		{desc: "name given twice", body: `{"name":"a","name":"b"}`, wantStatus: 400, wantBody: `{"error":"request body: invalid JSON: duplicate object member name \"name\""}`},
		{desc: "bad character", body: `{"name":'a'}`, wantStatus: 400, wantBody: `{"error":"request body: invalid JSON: invalid character '\\'' at start of value within \"/name\" after offset 8"}`},
		{desc: "names match in any case", body: `{"Name":"a","COUNT":3}`, wantStatus: 200, wantBody: `{"name":"a","count":3}`},
		{desc: "invalid UTF-8 becomes U+FFFD", body: "{\"name\":\"a\xffb\"}", wantStatus: 200, wantBody: "{\"name\":\"a\uFFFDb\",\"count\":0}"},
		{desc: "overflowing integer", body: `{"count":99999999999999999999}`, wantStatus: 400, wantBody: `{"error":"request body: field \"count\" must be an integer"}`},
		{desc: "form body refused", body: `name=a`, contentType: "application/x-www-form-urlencoded", wantStatus: 415,
			wantBody: `{"error":"request body: Content-Type must be application/json, got \"application/x-www-form-urlencoded\""}`},
		{desc: "declared too large", body: big, wantStatus: 413, wantBody: `{"error":"request body too large: the limit is 1024 bytes"}`},
		{desc: "chunked too large", body: big, chunked: true, wantStatus: 413, wantBody: `{"error":"request body too large: the limit is 1024 bytes"}`},
		{desc: "handler error with status", body: `{"name":"conflict"}`, wantStatus: 409, wantBody: `{"error":"item \"conflict\" exists"}`},
		{desc: "internal error hides the detail", body: `{"name":"fail"}`, wantStatus: 500,
			wantBody: `{"error":"internal server error; the hub log has the details under this request's X-Request-Id"}`},
		{desc: "panic becomes a 500", body: `{"name":"panic"}`, wantStatus: 500,
			wantBody: `{"error":"internal server error; the hub log has the details under this request's X-Request-Id"}`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			h := map[string]string{}
			if tt.contentType != "" {
				h["Content-Type"] = tt.contentType
			}
			req := request{method: "POST", url: "/api/test/items", body: tt.body, header: h}
			var code int
			var body string
			if tt.chunked {
				w := doChunked(t, s.Handler(), req)
				code, body = w.Code, w.Body.String()
			} else {
				w := do(t, s.Handler(), req)
				code, body = w.Code, w.Body.String()
			}
			if code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", code, tt.wantStatus, body)
			}
			if diff := cmp.Diff(strings.TrimSpace(body), tt.wantBody); diff != "" {
				t.Errorf("body (-got, +want):\n%s", diff)
			}
		})
	}
	if strings.Contains(logs.String(), "disk on fire") == false {
		t.Error("the 500's cause was not logged")
	}
	if !strings.Contains(logs.String(), `"msg":"handler panic"`) {
		t.Error("the panic was not logged")
	}
}

func TestEveryLogLineOfARequestHasItsID(t *testing.T) {
	s, logs := newTestServer(t, &fakePinger{}, testRoutes)
	do(t, s.Handler(), request{method: "POST", url: "/api/test/items", body: `{"name":"logged"}`,
		header: map[string]string{"X-Request-Id": "trace-77"}})
	var lines int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		lines++
		if rec["request_id"] != "trace-77" {
			t.Errorf("log line without the request id: %s", line)
		}
	}
	if lines != 2 { // the handler's own line and the access line
		t.Errorf("got %d log lines, want 2:\n%s", lines, logs)
	}
}

func TestMetricsUseRouteTemplates(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, testRoutes)
	h := s.Handler()
	do(t, h, request{method: "GET", url: "/api/test/items/4242?name=a"})
	do(t, h, request{method: "GET", url: "/api/test/items/4243?name=a"})
	do(t, h, request{method: "GET", url: "/api/test/items/4244?name=a&minutes=0"})
	do(t, h, request{method: "GET", url: "/api/v1/unknown-thing"})
	body := do(t, h, request{method: "GET", url: "/metrics"}).Body.String()
	for _, want := range []string{
		`netmon_http_request_duration_seconds_count{method="GET",route="/api/test/items/{id}",status="200"} 2`,
		`netmon_http_request_duration_seconds_count{method="GET",route="/api/test/items/{id}",status="400"} 1`,
		`netmon_http_request_duration_seconds_count{method="GET",route="other",status="404"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, raw := range []string{"4242", "unknown-thing"} {
		if strings.Contains(body, raw) {
			t.Errorf("metrics contain the raw path segment %q", raw)
		}
	}
}
