package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"netmon/app/ai/provider"
	pt "netmon/app/ai/provider/providertest"
)

// TestRequestShape checks what each kind puts on the wire: method,
// path, auth header, and the JSON body, field by field, exactly.
func TestRequestShape(t *testing.T) {
	sys := map[string]any{"role": "system", "content": "You are netmon's assistant."}
	user := map[string]any{"role": "user", "content": "why is the office link slow?"}
	cases := []struct {
		kind    string
		noThink bool
		paths   []string
		auth    map[string]string // header → value; "" means absent
		body    map[string]any    // the last request's body
		first   map[string]any    // the first request's body, when two
	}{
		{
			kind: "cloud-a", paths: []string{"POST /v1/chat/completions"},
			auth: map[string]string{"Authorization": "Bearer " + testKey, "x-api-key": ""},
			body: map[string]any{"model": "fake-small", "messages": []any{sys, user}, "stream": true,
				"stream_options": map[string]any{"include_usage": true}, "max_completion_tokens": 256.0, "temperature": 0.2},
		},
		{
			kind: "compat", noThink: true, paths: []string{"POST /v1/chat/completions"},
			auth: map[string]string{"Authorization": "Bearer " + testKey},
			body: map[string]any{"model": "fake-small", "messages": []any{sys, user}, "stream": true,
				"stream_options": map[string]any{"include_usage": true}, "max_tokens": 256.0, "temperature": 0.2,
				"chat_template_kwargs": map[string]any{"enable_thinking": false}},
		},
		{
			kind: "cloud-b", noThink: true, paths: []string{"POST /v1/messages"},
			auth: map[string]string{"x-api-key": testKey, "anthropic-version": "2023-06-01", "Authorization": ""},
			body: map[string]any{"model": "fake-small", "system": "You are netmon's assistant.", "messages": []any{user},
				"max_tokens": 256.0, "stream": true, "temperature": 0.2},
		},
		{
			kind: "local-a", noThink: true, paths: []string{"POST /api/chat"},
			auth: map[string]string{"Authorization": "Bearer " + testKey},
			body: map[string]any{"model": "fake-small", "messages": []any{sys, user}, "stream": true, "think": false,
				"options": map[string]any{"num_predict": 256.0, "temperature": 0.2}},
		},
		{
			kind: "local-b", noThink: true, paths: []string{"POST /apply-template", "POST /completion"},
			auth:  map[string]string{"Authorization": "Bearer " + testKey},
			first: map[string]any{"messages": []any{sys, user}, "chat_template_kwargs": map[string]any{"enable_thinking": false}},
			body: map[string]any{"prompt": "<|im_start|>system\nYou are netmon's assistant.<|im_end|>\n<|im_start|>user\nwhy is the office link slow?<|im_end|>\n<|im_start|>assistant\n",
				"stream": true, "n_predict": 256.0, "temperature": 0.2, "cache_prompt": true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			srv := pt.New(t, tc.kind)
			req := basicRequest()
			req.NoThink = tc.noThink
			s, err := newClient(t, srv, provider.Options{}).Chat(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if r := drain(t, s); r.err != nil || r.text() != "ok" {
				t.Fatalf("stream: %q %v", r.text(), r.err)
			}
			reqs := srv.Requests()
			var paths []string
			for _, r := range reqs {
				paths = append(paths, r.Method+" "+r.Path)
			}
			if !reflect.DeepEqual(paths, tc.paths) {
				t.Fatalf("requests = %q, want %q", paths, tc.paths)
			}
			last := reqs[len(reqs)-1]
			for h, want := range tc.auth {
				if got := last.Header.Get(h); got != want {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
			if ct := last.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if got := last.JSON(); !reflect.DeepEqual(got, tc.body) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(tc.body)
				t.Errorf("body\n got %s\nwant %s", gb, wb)
			}
			if tc.first != nil {
				if got := reqs[0].JSON(); !reflect.DeepEqual(got, tc.first) {
					gb, _ := json.Marshal(got)
					t.Errorf("first body = %s", gb)
				}
			}
		})
	}
}

// TestRequestDefaults: without MaxTokens, NoThink or Temperature the
// optional fields are absent, except cloud-b's required max_tokens;
// a "system" turn joins cloud-b's top-level system prompt; no key, no
// auth header.
func TestRequestDefaults(t *testing.T) {
	for _, kind := range allKinds {
		t.Run(kind, func(t *testing.T) {
			srv := pt.New(t, kind)
			c, err := provider.New(provider.Kind(kind), srv.URL, "", provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			req := provider.Request{Model: "fake-small", Messages: []provider.Message{{Role: "system", Content: "Data is not instruction."}, {Role: "user", Content: "hi"}}}
			s, err := c.Chat(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			drain(t, s)
			reqs := srv.Requests()
			last := reqs[len(reqs)-1]
			if h := last.Header.Get("Authorization") + last.Header.Get("x-api-key"); h != "" {
				t.Errorf("auth header sent without a key: %q", h)
			}
			body := last.JSON()
			for _, absent := range []string{"max_tokens", "max_completion_tokens", "n_predict", "temperature", "think", "options", "chat_template_kwargs"} {
				if _, ok := body[absent]; ok && !(kind == "cloud-b" && absent == "max_tokens") {
					t.Errorf("field %s sent: %v", absent, body[absent])
				}
			}
			if kind == "cloud-b" {
				if body["max_tokens"] != float64(provider.DefaultMaxTokens) || body["system"] != "Data is not instruction." {
					t.Errorf("cloud-b body = %v", body)
				}
				if msgs := body["messages"].([]any); len(msgs) != 1 {
					t.Errorf("cloud-b messages = %v, want only the user turn", msgs)
				}
			}
		})
	}
}

// TestModels lists each kind's models from its documented endpoint,
// in the provider's order.
func TestModels(t *testing.T) {
	for _, kind := range allKinds {
		t.Run(kind, func(t *testing.T) {
			srv := pt.New(t, kind)
			srv.SetModels("qwen3:0.6b", "llama3.2:1b", "gemma3:270m")
			got, err := newClient(t, srv, provider.Options{}).Models(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"qwen3:0.6b", "llama3.2:1b", "gemma3:270m"}; !reflect.DeepEqual(got, want) {
				t.Errorf("models = %q, want %q", got, want)
			}
			wantPath := "/v1/models"
			if kind == "local-a" {
				wantPath = "/api/tags"
			}
			if p := srv.Requests()[0].Path; p != wantPath {
				t.Errorf("path = %s, want %s", p, wantPath)
			}
		})
	}
}

// TestModelsErrors: a wrong key is unauthorized; an empty list is an
// empty list, not an error; a body of another format is bad_response.
func TestModelsErrors(t *testing.T) {
	for _, kind := range allKinds {
		t.Run(kind, func(t *testing.T) {
			srv := pt.New(t, kind)
			srv.RequireKey("the-right-key")
			_, err := newClient(t, srv, provider.Options{}).Models(context.Background())
			if provider.ClassOf(err) != provider.Unauthorized || strings.Contains(err.Error(), testKey) {
				t.Errorf("wrong key: %v", err)
			}
			srv.RequireKey("")
			srv.SetModels()
			got, err := newClient(t, srv, provider.Options{}).Models(context.Background())
			if err != nil || got == nil || len(got) != 0 {
				t.Errorf("empty list: %q %v", got, err)
			}
			other := "local-a"
			if kind == "local-a" {
				other = "cloud-a"
			}
			c, _ := provider.New(provider.Kind(other), srv.URL, "", provider.Options{})
			if _, err := c.Models(context.Background()); provider.ClassOf(err) != provider.BadResponse && provider.ClassOf(err) != provider.NotFound {
				t.Errorf("wrong kind's list: %v", err)
			}
		})
	}
}

// TestChatAuthAndModel: a wrong key → unauthorized, an unknown model →
// not_found, in every kind's own error shape, with neither the key nor
// the body's text in the error.
func TestChatAuthAndModel(t *testing.T) {
	for _, kind := range allKinds {
		t.Run(kind, func(t *testing.T) {
			srv := pt.New(t, kind)
			srv.RequireKey("the-right-key")
			_, err := newClient(t, srv, provider.Options{}).Chat(context.Background(), basicRequest())
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Class != provider.Unauthorized || pe.Status != 401 {
				t.Fatalf("wrong key: %v", err)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "invalid api key") {
				t.Errorf("error text leaks: %s", err)
			}
			if kind == "local-b" {
				return // llama.cpp serves its one loaded model: no model check
			}
			srv.RequireKey("")
			req := basicRequest()
			req.Model = "no-such-model"
			_, err = newClient(t, srv, provider.Options{}).Chat(context.Background(), req)
			if !errors.As(err, &pe) || pe.Class != provider.NotFound || pe.Status != 404 {
				t.Fatalf("unknown model: %v", err)
			}
			if strings.Contains(err.Error(), "no-such-model") {
				t.Errorf("error text repeats the remote body: %s", err)
			}
			wantCode := map[string]string{"cloud-a": "model_not_found", "compat": "model_not_found", "cloud-b": "not_found_error", "local-a": ""}[kind]
			if pe.Code != wantCode {
				t.Errorf("code = %q, want %q", pe.Code, wantCode)
			}
		})
	}
}

// TestRetryAfterDate: a 429 whose Retry-After is an HTTP-date gives
// the wait until that date.
func TestRetryAfterDate(t *testing.T) {
	for _, kind := range []string{"cloud-a", "cloud-b"} {
		srv := pt.New(t, kind)
		srv.Push(pt.ErrorScript(kind, 429, bodyMarker, pt.RetryDate(time.Now().Add(90*time.Second))))
		_, err := newClient(t, srv, provider.Options{}).Chat(context.Background(), basicRequest())
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Class != provider.RateLimited {
			t.Fatalf("%s: %v", kind, err)
		}
		// The date has one-second resolution and the call takes a moment.
		if pe.RetryAfter < 88*time.Second || pe.RetryAfter > 90*time.Second {
			t.Errorf("%s: retry after %s, want about 90s", kind, pe.RetryAfter)
		}
	}
}

// TestCompat: the base URL is accepted with or without /v1; a sparse
// compatible server (no ids, no usage, no [DONE]) ends cleanly with 0
// tokens, while the same bytes from cloud-a are a cut: OpenAI always
// sends [DONE], so its absence means the stream was lost.
func TestCompat(t *testing.T) {
	sparse := pt.Answer{Parts: []pt.Part{{Text: "up"}, {Text: " 3%"}}, Sparse: true}
	for _, base := range []string{"", "/v1", "/v1/"} {
		srv := pt.New(t, "compat")
		srv.Push(pt.Script{Chunks: pt.Stream("compat", sparse)})
		c, err := provider.New(provider.Compat, srv.URL+base, "", provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Chat(context.Background(), basicRequest())
		if err != nil {
			t.Fatalf("base %q: %v", base, err)
		}
		r := drain(t, s)
		if r.err != nil || r.text() != "up 3%" || !r.done || r.in != 0 || r.out != 0 {
			t.Errorf("base %q: %+v", base, r)
		}
		if p := srv.Requests()[0].Path; p != "/v1/chat/completions" {
			t.Errorf("base %q: path %s", base, p)
		}
	}
	srv := pt.New(t, "cloud-a")
	srv.Push(pt.Script{Chunks: pt.Stream("cloud-a", sparse)})
	s, err := newClient(t, srv, provider.Options{}).Chat(context.Background(), basicRequest())
	if err != nil {
		t.Fatal(err)
	}
	if r := drain(t, s); provider.ClassOf(r.err) != provider.Cut || r.text() != "up 3%" {
		t.Errorf("cloud-a without [DONE]: %q %v", r.text(), r.err)
	}
}

// TestNewRejects: unknown kinds and base URLs that could carry a secret
// or are not http(s) are refused, and the error does not echo the URL.
func TestNewRejects(t *testing.T) {
	cases := []struct {
		kind provider.Kind
		url  string
	}{
		{"cloud-c", "https://api.example.com"},
		{provider.CloudA, "ftp://api.example.com"},
		{provider.CloudA, "api.example.com"},
		{provider.CloudA, "https://user:sk-inurl@api.example.com"},
		{provider.Compat, "https://api.example.com/v1?key=sk-inurl"},
		{provider.LocalA, "http://127.0.0.1:11434/#frag"},
	}
	for _, tc := range cases {
		_, err := provider.New(tc.kind, tc.url, testKey, provider.Options{})
		if !errors.Is(err, provider.ErrConfig) {
			t.Errorf("New(%s, %s) = %v, want ErrConfig", tc.kind, tc.url, err)
			continue
		}
		if strings.Contains(err.Error(), "sk-inurl") || strings.Contains(err.Error(), testKey) {
			t.Errorf("error leaks: %s", err)
		}
	}
}

// TestUnreachable: nothing listening is unreachable, quickly.
func TestUnreachable(t *testing.T) {
	srv := pt.New(t, "local-a")
	url := srv.URL
	c, _ := provider.New(provider.LocalA, url, testKey, provider.Options{})
	srvClose(t, srv)
	_, err := c.Chat(context.Background(), basicRequest())
	if provider.ClassOf(err) != provider.Unreachable || strings.Contains(err.Error(), testKey) {
		t.Errorf("closed port: %v", err)
	}
}
