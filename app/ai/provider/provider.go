// Package provider speaks to the language-model providers of the
// advisory assistant (spec 1 capability 9, 2.8, 9.5, issue 32): five
// kinds, each mapped to one real, documented wire format, behind one
// streaming interface. It knows nothing of conversations, context or
// routes; it sends what it is given and returns text deltas with the
// reasoning stripped, token counts, and typed errors that never carry
// the API key or the remote body.
//
// The kinds and their formats:
//
//	cloud-a  OpenAI Chat Completions: POST /v1/chat/completions, SSE
//	         "data: {chunk}" … "data: [DONE]", usage in the last chunk
//	         (stream_options.include_usage); models GET /v1/models.
//	cloud-b  Anthropic Messages: POST /v1/messages with x-api-key and
//	         anthropic-version: 2023-06-01; SSE named events
//	         message_start … message_stop; models GET /v1/models.
//	local-a  Ollama: POST /api/chat, NDJSON, last object done:true with
//	         prompt_eval_count and eval_count; models GET /api/tags.
//	local-b  llama.cpp server, native API: POST /apply-template renders
//	         the chat with the model's own template, POST /completion
//	         streams SSE "data: {content, stop, tokens_predicted,
//	         tokens_evaluated}" ending with stop:true (no [DONE]);
//	         models GET /v1/models.
//	compat   any OpenAI-compatible server (vLLM, LM Studio, LocalAI,
//	         llama.cpp's /v1): the cloud-a format, base URL with or
//	         without /v1, tolerant of missing usage, ids and [DONE].
package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Kind is a provider kind, as stored in the provider row (spec 2.8).
type Kind string

// The five kinds.
const (
	CloudA Kind = "cloud-a"
	CloudB Kind = "cloud-b"
	LocalA Kind = "local-a"
	LocalB Kind = "local-b"
	Compat Kind = "compat"
)

// Kinds lists the kinds in the spec's order.
var Kinds = []Kind{CloudA, CloudB, LocalA, LocalB, Compat}

// Message is one turn of the conversation sent to the model.
type Message struct {
	// Role is "user" or "assistant" ("system" turns are folded into the
	// system prompt for kinds that have no such role).
	Role    string
	Content string
}

// Request is one chat call.
type Request struct {
	// Model is the provider's model name; required.
	Model string
	// System is the system prompt (may be empty).
	System   string
	Messages []Message
	// MaxTokens caps the answer (spec 9.5 max_tokens); 0 leaves the
	// provider's default, except cloud-b, which requires a value and
	// gets DefaultMaxTokens.
	MaxTokens int
	// NoThink asks the model not to reason where the kind has a switch
	// (spec 9.5 no_think); reasoning is stripped from the answer either way.
	NoThink bool
	// Temperature is sent when set.
	Temperature *float64
}

// DefaultMaxTokens is what cloud-b gets when Request.MaxTokens is 0:
// the Messages API requires max_tokens.
const DefaultMaxTokens = 1024

// Event is one item of a stream: a text fragment, or the end with the
// token counts.
type Event struct {
	Delta     string
	Done      bool
	TokensIn  int
	TokensOut int
}

// Stream is an answer being received. Next returns deltas, then one
// Done event, then io.EOF; or an *Error, and the same error again after.
// Close ends the call at once (the connection is closed) and is safe to
// call more than once and after the end.
type Stream interface {
	Next() (Event, error)
	Close() error
}

// Client is one configured provider.
type Client interface {
	// Chat sends req and returns the answer's stream once the response
	// headers are in and are a success.
	Chat(ctx context.Context, req Request) (Stream, error)
	// Models lists the model names the provider offers.
	Models(ctx context.Context) ([]string, error)
}

// Options shape a client. The zero value works (with defaults) but the
// hub passes HTTPClient built by app/netguard, so every connection,
// redirects included, is dialled through the outbound guard.
type Options struct {
	// HTTPClient does the requests (its Transport and CheckRedirect are
	// used; its Timeout is ignored, since a stream outlives any fixed
	// request timeout: Timeout, FirstByteTimeout and IdleTimeout bound
	// the call instead). Nil builds one from DialContext.
	HTTPClient *http.Client
	// DialContext is used when HTTPClient is nil (the guard's dialer);
	// nil uses a plain net.Dialer.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Timeout bounds a whole call, stream included (5 min when 0).
	Timeout time.Duration
	// FirstByteTimeout bounds the wait from sending the request to the
	// first byte of the answer's body (60 s when 0: a local engine may
	// load the model first).
	FirstByteTimeout time.Duration
	// IdleTimeout bounds the silence between two reads of the stream
	// (30 s when 0).
	IdleTimeout time.Duration
	// MaxLineBytes caps one line or SSE event (1 MiB when 0).
	MaxLineBytes int
	// MaxResponseBytes caps a whole response body (16 MiB when 0).
	MaxResponseBytes int64
	// UserAgent is sent as User-Agent ("netmon" when empty).
	UserAgent string
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.FirstByteTimeout <= 0 {
		o.FirstByteTimeout = 60 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 30 * time.Second
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 1 << 20
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 16 << 20
	}
	if o.UserAgent == "" {
		o.UserAgent = "netmon"
	}
	return o
}

// ErrConfig is wrapped by New's errors (unknown kind, bad base URL).
var ErrConfig = errors.New("invalid provider configuration")

// New returns a client for kind at baseURL. The base URL is the
// server's root ("https://api.openai.com", "http://127.0.0.1:11434");
// for cloud-a, cloud-b and compat a trailing "/v1" is accepted too. It
// must be http or https and carry no user info, query or fragment: the
// key goes in apiKey, where it is only ever put in a header.
func New(kind Kind, baseURL, apiKey string, opts Options) (Client, error) {
	if !validKind(kind) {
		return nil, fmt.Errorf("%w: unknown kind %q", ErrConfig, kind)
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: base URL must be http(s)://host[:port][/path]", ErrConfig)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: base URL must not hold user info, a query or a fragment (put the key in api_key)", ErrConfig)
	}
	path := strings.TrimRight(u.Path, "/")
	if kind == CloudA || kind == CloudB || kind == Compat {
		path = strings.TrimSuffix(path, "/v1")
	}
	u.Path, u.RawPath = path, ""
	opts = opts.withDefaults()
	hc := &http.Client{}
	if opts.HTTPClient != nil {
		*hc = *opts.HTTPClient
	} else {
		dial := opts.DialContext
		if dial == nil {
			dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
		}
		hc.Transport = &http.Transport{Proxy: nil, DialContext: dial, TLSHandshakeTimeout: 10 * time.Second, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 4}
	}
	hc.Timeout = 0 // the call's own deadlines apply
	return &client{kind: kind, base: u.String(), key: apiKey, opts: opts, http: hc}, nil
}

func validKind(k Kind) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

type client struct {
	kind Kind
	base string
	key  string
	opts Options
	http *http.Client
}

// setAuth puts the key in the kind's header; without a key no header.
func (c *client) setAuth(h http.Header) {
	if c.kind == CloudB {
		if c.key != "" {
			h.Set("x-api-key", c.key)
		}
		h.Set("anthropic-version", "2023-06-01")
		return
	}
	if c.key != "" {
		h.Set("Authorization", "Bearer "+c.key)
	}
}

// post sends a JSON body and returns the response once its status is a
// success; the watchdog is armed for the first byte before sending.
func (c *client) do(ctx context.Context, op, method, path string, body any, wd *watchdog, parent context.Context) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, &Error{Kind: c.kind, Op: op, Class: BadRequest, Detail: "encode request", cause: err}
		}
		rd = bytes.NewReader(b)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, &Error{Kind: c.kind, Op: op, Class: BadRequest, Detail: "build request"}
	}
	if body != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	hreq.Header.Set("User-Agent", c.opts.UserAgent)
	c.setAuth(hreq.Header)
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, c.transportError(op, err, wd, parent)
	}
	if resp.StatusCode/100 != 2 {
		return nil, c.statusError(op, resp)
	}
	return resp, nil
}

// statusError reads (a bounded part of) a failed response for its
// error code only, and closes it.
func (c *client) statusError(op string, resp *http.Response) *Error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &Error{Kind: c.kind, Op: op, Status: resp.StatusCode, Class: classifyStatus(resp.StatusCode), Code: errorCode(b)}
	if e.Class == RateLimited || resp.StatusCode == http.StatusServiceUnavailable {
		e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	}
	return e
}

// errorCode pulls a machine code out of the error shapes of the four
// formats: OpenAI {"error":{"code","type"}}, Anthropic
// {"type":"error","error":{"type"}}, llama.cpp {"error":{"type"}};
// Ollama's {"error":"text"} has none.
func errorCode(b []byte) string {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &v) != nil || len(v.Error) == 0 {
		return ""
	}
	var o struct {
		Code any    `json:"code"`
		Type string `json:"type"`
	}
	if json.Unmarshal(v.Error, &o) != nil {
		return ""
	}
	if s, ok := o.Code.(string); ok && cleanCode(s) != "" {
		return cleanCode(s)
	}
	return cleanCode(o.Type)
}

// Models lists the provider's models.
func (c *client) Models(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, min(c.opts.Timeout, c.opts.FirstByteTimeout+c.opts.IdleTimeout))
	defer cancel()
	wd := newWatchdog(cancel)
	path := "/v1/models"
	if c.kind == LocalA {
		path = "/api/tags"
	}
	resp, err := c.do(ctx, "models", http.MethodGet, path, nil, wd, ctx)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20+1))
	if err != nil {
		return nil, &Error{Kind: c.kind, Op: "models", Class: Cut, Detail: "body read failed", cause: err}
	}
	if len(b) > 4<<20 {
		return nil, &Error{Kind: c.kind, Op: "models", Class: TooLarge, Detail: "model list over 4 MiB"}
	}
	names, err := parseModels(c.kind, b)
	if err != nil {
		return nil, &Error{Kind: c.kind, Op: "models", Class: BadResponse, Detail: "model list does not parse"}
	}
	return names, nil
}

// parseModels reads GET /v1/models ({"data":[{"id"}]}, OpenAI,
// Anthropic, llama.cpp, compat) or Ollama's GET /api/tags
// ({"models":[{"name"}]}), keeping the provider's order.
func parseModels(kind Kind, b []byte) ([]string, error) {
	var v struct {
		Data *[]struct {
			ID string `json:"id"`
		} `json:"data"`
		Models *[]struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	names := []string{}
	switch {
	case kind == LocalA && v.Models != nil:
		for _, m := range *v.Models {
			n := m.Name
			if n == "" {
				n = m.Model
			}
			if n != "" {
				names = append(names, n)
			}
		}
	case kind != LocalA && v.Data != nil:
		for _, m := range *v.Data {
			if m.ID != "" {
				names = append(names, m.ID)
			}
		}
	default:
		return nil, errors.New("no model list")
	}
	return names, nil
}
