package provider_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"netmon/app/ai/provider"
	pt "netmon/app/ai/provider/providertest"
)

// The key and the marker must never appear in an error's text: the key
// is the operator's secret, the marker stands for a remote body (which
// can echo the prompt or a proxy's page).
const (
	testKey    = "sk-test-SECRET-0123456789"
	bodyMarker = "REMOTE-BODY-MARKER-7f3a"
)

var allKinds = []string{"cloud-a", "cloud-b", "local-a", "local-b", "compat"}

// result is what a test reads off a stream: every delta, the end, or
// the error, and which deltas came before it.
type result struct {
	deltas    []string
	done      bool
	in, out   int
	err       error
	afterDone error // what Next returns after the Done event
}

func (r result) text() string { return strings.Join(r.deltas, "") }

func drain(t *testing.T, s provider.Stream) result {
	t.Helper()
	var r result
	for i := 0; i < 10000; i++ {
		ev, err := s.Next()
		if err != nil {
			r.err = err
			return r
		}
		if ev.Done {
			r.done, r.in, r.out = true, ev.TokensIn, ev.TokensOut
			_, r.afterDone = s.Next()
			return r
		}
		if ev.Delta == "" {
			t.Fatalf("empty delta event")
		}
		r.deltas = append(r.deltas, ev.Delta)
	}
	t.Fatal("stream never ended")
	return r
}

func newClient(t *testing.T, srv *pt.Server, opts provider.Options) provider.Client {
	t.Helper()
	c, err := provider.New(provider.Kind(srv.Kind), srv.URL, testKey, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func basicRequest() provider.Request {
	temp := 0.2
	return provider.Request{
		Model: "fake-small", System: "You are netmon's assistant.",
		Messages:  []provider.Message{{Role: "user", Content: "why is the office link slow?"}},
		MaxTokens: 256, Temperature: &temp,
	}
}

// reasoningParts scripts a reasoning field for kinds that have one;
// llama.cpp's /completion has none, so there the reasoning arrives as
// markup in the content, which is what a Qwen3 GGUF writes.
func reasoningParts(kind string) []pt.Part {
	if kind == "local-b" {
		return []pt.Part{{Text: "<think>the user wants latency"}, {Text: "</think>\n\n"}, {Text: "Latency rose"}, {Text: " at 09:00."}}
	}
	return []pt.Part{{Reasoning: "the user wants latency"}, {Reasoning: " figures"}, {Text: "Latency rose"}, {Text: " at 09:00."}}
}

// TestStreams runs every kind through the success scenarios and checks
// the exact text, its split into deltas where it is deterministic, and
// the token counts.
func TestStreams(t *testing.T) {
	scenarios := []struct {
		name      string
		answer    func(kind string) pt.Answer
		wantText  string
		wantIn    int
		wantOut   int
		wantSplit []string // nil: only the joined text is checked
	}{
		{
			name: "plain, usage at the end",
			answer: func(string) pt.Answer {
				return pt.Answer{Parts: []pt.Part{{Text: "Hello"}, {Text: ", world"}, {Text: "!"}}, TokensIn: 12, TokensOut: 5}
			},
			wantText:  "Hello, world!",
			wantIn:    12,
			wantOut:   5,
			wantSplit: []string{"Hello", ", world", "!"},
		},
		{
			name: "reasoning fields dropped",
			answer: func(kind string) pt.Answer {
				return pt.Answer{Parts: reasoningParts(kind), TokensIn: 40, TokensOut: 19}
			},
			wantText:  "Latency rose at 09:00.",
			wantIn:    40,
			wantOut:   19,
			wantSplit: []string{"Latency rose", " at 09:00."},
		},
		{
			name: "<think> split across chunks mid-tag",
			answer: func(string) pt.Answer {
				return pt.Answer{Parts: []pt.Part{{Text: "<thi"}, {Text: "nk>secret plan: ignore"}, {Text: " the user</th"}, {Text: "ink>\n\nAnswer"}, {Text: ": 42 <b"}, {Text: "ytes>"}}, TokensIn: 9, TokensOut: 14}
			},
			wantText: "Answer: 42 <bytes>",
			wantIn:   9,
			wantOut:  14,
		},
		{
			name: "unicode and escapes survive",
			answer: func(string) pt.Answer {
				return pt.Answer{Parts: []pt.Part{{Text: "Débit \"élevé\"\n"}, {Text: "→ 5 Mbit/s ✓"}}, TokensIn: 3, TokensOut: 4}
			},
			wantText:  "Débit \"élevé\"\n→ 5 Mbit/s ✓",
			wantIn:    3,
			wantOut:   4,
			wantSplit: []string{"Débit \"élevé\"\n", "→ 5 Mbit/s ✓"},
		},
	}
	for _, kind := range allKinds {
		for _, sc := range scenarios {
			t.Run(kind+"/"+sc.name, func(t *testing.T) {
				srv := pt.New(t, kind)
				srv.Push(pt.Script{Chunks: pt.Stream(kind, sc.answer(kind))})
				s, err := newClient(t, srv, provider.Options{}).Chat(context.Background(), basicRequest())
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				r := drain(t, s)
				if r.err != nil {
					t.Fatalf("stream error: %v", r.err)
				}
				if r.text() != sc.wantText {
					t.Errorf("text = %q, want %q", r.text(), sc.wantText)
				}
				if sc.wantSplit != nil && strings.Join(r.deltas, "|") != strings.Join(sc.wantSplit, "|") {
					t.Errorf("deltas = %q, want %q", r.deltas, sc.wantSplit)
				}
				if r.in != sc.wantIn || r.out != sc.wantOut {
					t.Errorf("tokens = %d/%d, want %d/%d", r.in, r.out, sc.wantIn, sc.wantOut)
				}
				if !errors.Is(r.afterDone, io.EOF) {
					t.Errorf("after Done: %v, want io.EOF", r.afterDone)
				}
			})
		}
	}
}

// TestFailures runs every kind through the failure scenarios: the
// class, the deltas received before the failure, Retry-After, and that
// neither the key nor the remote body's text reaches the error.
func TestFailures(t *testing.T) {
	partial := []pt.Part{{Text: "Partial "}, {Text: "answer"}}
	scenarios := []struct {
		name       string
		kinds      []string // nil: all
		script     func(kind string) pt.Script
		opts       provider.Options
		atChat     bool // the error comes from Chat, not Next
		wantClass  map[string]provider.Class
		class      provider.Class
		wantText   string
		wantStatus int
		wantRetry  time.Duration
		maxElapsed time.Duration
		// maxText replaces the exact text check: the cap cuts wherever
		// the reads happen to end, but never lets the cap's worth through.
		maxText int
	}{
		{
			name: "error event mid-stream",
			script: func(kind string) pt.Script {
				return pt.Script{Chunks: append(pt.Stream(kind, pt.Answer{Parts: partial, NoEnd: true}), pt.ErrorEvent(kind, bodyMarker+" overloaded, prompt was: secret"))}
			},
			class:     provider.Remote,
			wantClass: map[string]provider.Class{"cloud-b": provider.Server},
			wantText:  "Partial answer",
		},
		{
			name:       "429 with Retry-After seconds",
			script:     func(kind string) pt.Script { return pt.ErrorScript(kind, 429, bodyMarker+" slow down", "7") },
			atChat:     true,
			class:      provider.RateLimited,
			wantStatus: 429,
			wantRetry:  7 * time.Second,
		},
		{
			name:       "500",
			script:     func(kind string) pt.Script { return pt.ErrorScript(kind, 500, bodyMarker+" stack trace", "") },
			atChat:     true,
			class:      provider.Server,
			wantStatus: 500,
		},
		{
			name:       "529 overloaded",
			kinds:      []string{"cloud-b"},
			script:     func(kind string) pt.Script { return pt.ErrorScript(kind, 529, bodyMarker, "") },
			atChat:     true,
			class:      provider.Server,
			wantStatus: 529,
		},
		{
			name:       "400 context too long",
			script:     func(kind string) pt.Script { return pt.ErrorScript(kind, 400, bodyMarker+" too many tokens", "") },
			atChat:     true,
			class:      provider.BadRequest,
			wantStatus: 400,
		},
		{
			name: "connection cut mid-stream",
			script: func(kind string) pt.Script {
				return pt.Script{Chunks: pt.Stream(kind, pt.Answer{Parts: partial, NoEnd: true}), Cut: true}
			},
			class:    provider.Cut,
			wantText: "Partial answer",
		},
		{
			name: "clean close before the end marker",
			script: func(kind string) pt.Script {
				return pt.Script{Chunks: pt.Stream(kind, pt.Answer{Parts: partial, NoEnd: true})}
			},
			class:    provider.Cut,
			wantText: "Partial answer",
		},
		{
			name: "slow first byte",
			script: func(kind string) pt.Script {
				return pt.Script{FirstByteDelay: 2 * time.Second, Chunks: pt.Stream(kind, pt.Answer{Parts: partial})}
			},
			opts:       provider.Options{FirstByteTimeout: 150 * time.Millisecond},
			atChat:     true,
			class:      provider.Timeout,
			maxElapsed: time.Second,
		},
		{
			name: "idle between chunks",
			script: func(kind string) pt.Script {
				a := pt.Answer{Parts: []pt.Part{{Text: "Partial "}, {Text: "answer", Delay: 3 * time.Second}}}
				return pt.Script{Chunks: pt.Stream(kind, a)}
			},
			opts:       provider.Options{IdleTimeout: 150 * time.Millisecond},
			class:      provider.Timeout,
			wantText:   "Partial ",
			maxElapsed: time.Second,
		},
		{
			name: "body that is not the format",
			script: func(kind string) pt.Script {
				if kind == "local-a" {
					return pt.Script{Chunks: []pt.Chunk{{Data: "<html>" + bodyMarker + "</html>\n"}}}
				}
				return pt.Script{Chunks: []pt.Chunk{{Data: "data: <html>" + bodyMarker + "</html>\n\n"}}}
			},
			class: provider.BadResponse,
		},
		{
			name: "line over the cap",
			script: func(kind string) pt.Script {
				big := strings.Repeat("x", 4096)
				return pt.Script{Chunks: pt.Stream(kind, pt.Answer{Parts: []pt.Part{{Text: "ok"}, {Text: big}}})}
			},
			opts:     provider.Options{MaxLineBytes: 2048},
			class:    provider.TooLarge,
			wantText: "ok",
		},
		{
			name: "response over the cap",
			script: func(kind string) pt.Script {
				parts := make([]pt.Part, 200)
				for i := range parts {
					parts[i] = pt.Part{Text: strings.Repeat("y", 100)}
				}
				return pt.Script{Chunks: pt.Stream(kind, pt.Answer{Parts: parts})}
			},
			opts:    provider.Options{MaxResponseBytes: 8 << 10},
			class:   provider.TooLarge,
			maxText: 8 << 10,
		},
	}
	for _, kind := range allKinds {
		for _, sc := range scenarios {
			if sc.kinds != nil && !contains(sc.kinds, kind) {
				continue
			}
			t.Run(kind+"/"+sc.name, func(t *testing.T) {
				srv := pt.New(t, kind)
				srv.Push(sc.script(kind))
				start := time.Now()
				s, err := newClient(t, srv, sc.opts).Chat(context.Background(), basicRequest())
				var r result
				if err == nil {
					defer s.Close()
					r = drain(t, s)
					err = r.err
					if sc.atChat {
						t.Fatalf("Chat succeeded, want its error; stream gave %+v", r)
					}
				} else if !sc.atChat {
					t.Fatalf("Chat: %v, want the error from the stream", err)
				}
				if err == nil {
					t.Fatalf("no error; text %q", r.text())
				}
				want := sc.class
				if c, ok := sc.wantClass[kind]; ok {
					want = c
				}
				var pe *provider.Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %T %v is not *provider.Error", err, err)
				}
				if pe.Class != want {
					t.Errorf("class = %s, want %s (%v)", pe.Class, want, err)
				}
				if pe.Status != sc.wantStatus {
					t.Errorf("status = %d, want %d", pe.Status, sc.wantStatus)
				}
				if pe.RetryAfter != sc.wantRetry {
					t.Errorf("retry after = %s, want %s", pe.RetryAfter, sc.wantRetry)
				}
				if sc.maxText > 0 {
					if len(r.text()) >= sc.maxText {
						t.Errorf("%d bytes of text passed a %d-byte cap", len(r.text()), sc.maxText)
					}
				} else if r.text() != sc.wantText {
					t.Errorf("text before the error = %.80q, want %q", r.text(), sc.wantText)
				}
				if sc.maxElapsed > 0 && time.Since(start) > sc.maxElapsed {
					t.Errorf("took %s, want under %s", time.Since(start), sc.maxElapsed)
				}
				// A failure must never look like the normal end to a caller
				// that tests errors.Is(err, io.EOF).
				if errors.Is(err, io.EOF) {
					t.Errorf("error %v matches io.EOF", err)
				}
				for _, secret := range []string{testKey, bodyMarker, "secret", "<html>"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error text %q contains %q", err.Error(), secret)
					}
				}
				if s != nil {
					if _, again := s.Next(); !errors.Is(again, err) {
						t.Errorf("second Next = %v, want the same error", again)
					}
				}
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
