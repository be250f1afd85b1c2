package providertest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Part is one piece of a scripted answer: visible text, or a reasoning
// field (OpenAI-compatible reasoning_content, Anthropic thinking_delta,
// Ollama message.thinking; llama.cpp's /completion has no such field,
// so for local-b Reasoning is not sent: script <think> markup in Text).
type Part struct {
	Text      string
	Reasoning string
	// Delay is waited before the part's chunk is written.
	Delay time.Duration
}

// Answer is a scripted answer in format-neutral terms.
type Answer struct {
	Parts               []Part
	TokensIn, TokensOut int
	// Model is echoed in the chunks ("fake-small" when empty).
	Model string
	// NoEnd leaves out everything after the last part: finish chunk,
	// usage, [DONE], message_stop, done:true, stop:true (with Cut, the
	// connection drops mid-answer).
	NoEnd bool
	// Sparse (cloud-a/compat) writes the minimal chunks some compatible
	// servers send: no id, no usage, no [DONE] after the finish chunk.
	Sparse bool
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Stream returns the body chunks of a successful streamed answer in
// kind's exact wire format.
func Stream(kind string, a Answer) []Chunk {
	if a.Model == "" {
		a.Model = "fake-small"
	}
	switch kind {
	case "cloud-b":
		return anthropicStream(a)
	case "local-a":
		return ollamaStream(a)
	case "local-b":
		return llamaStream(a)
	}
	return openAIStream(a)
}

// openAIStream: chat.completion.chunk objects as "data:" events, the
// role in the first delta, a finish chunk with an empty delta, then
// (stream_options.include_usage) a chunk with empty choices and the
// usage, then "data: [DONE]".
func openAIStream(a Answer) []Chunk {
	ev := func(delay time.Duration, v any) Chunk { return Chunk{Delay: delay, Data: "data: " + js(v) + "\n\n"} }
	base := func(choices []any, usage any) map[string]any {
		if a.Sparse {
			return map[string]any{"choices": choices}
		}
		return map[string]any{"id": "chatcmpl-fake0001", "object": "chat.completion.chunk", "created": 1764309600, "model": a.Model, "system_fingerprint": "fp_fake", "choices": choices, "usage": usage}
	}
	choice := func(delta map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
	}
	var out []Chunk
	out = append(out, ev(0, base(choice(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil)))
	for _, p := range a.Parts {
		if p.Reasoning != "" {
			out = append(out, ev(p.Delay, base(choice(map[string]any{"reasoning_content": p.Reasoning, "content": nil}, nil), nil)))
			continue
		}
		out = append(out, ev(p.Delay, base(choice(map[string]any{"content": p.Text}, nil), nil)))
	}
	if a.NoEnd {
		return out
	}
	out = append(out, ev(0, base(choice(map[string]any{}, "stop"), nil)))
	if a.Sparse {
		return out
	}
	usage := map[string]any{"prompt_tokens": a.TokensIn, "completion_tokens": a.TokensOut, "total_tokens": a.TokensIn + a.TokensOut}
	out = append(out, ev(0, base([]any{}, usage)))
	return append(out, Chunk{Data: "data: [DONE]\n\n"})
}

// anthropicStream: named SSE events message_start (input usage),
// content blocks (thinking blocks with thinking_delta and
// signature_delta, text blocks with text_delta), a ping, message_delta
// with the cumulative output_tokens, message_stop.
func anthropicStream(a Answer) []Chunk {
	ev := func(delay time.Duration, name string, v any) Chunk {
		return Chunk{Delay: delay, Data: "event: " + name + "\ndata: " + js(v) + "\n\n"}
	}
	out := []Chunk{ev(0, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake0001", "type": "message", "role": "assistant", "content": []any{}, "model": a.Model,
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": a.TokensIn, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1},
	}})}
	index, open := -1, ""
	closeBlock := func() {
		if open == "thinking" {
			out = append(out, ev(0, "content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "signature_delta", "signature": "RmFrZVNpZ25hdHVyZQ=="}}))
		}
		if open != "" {
			out = append(out, ev(0, "content_block_stop", map[string]any{"type": "content_block_stop", "index": index}))
		}
	}
	for i, p := range a.Parts {
		want := "text"
		if p.Reasoning != "" {
			want = "thinking"
		}
		if want != open {
			closeBlock()
			index++
			open = want
			block := map[string]any{"type": "text", "text": ""}
			if want == "thinking" {
				block = map[string]any{"type": "thinking", "thinking": ""}
			}
			out = append(out, ev(0, "content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": block}))
			if i == 0 {
				out = append(out, ev(0, "ping", map[string]any{"type": "ping"}))
			}
		}
		if want == "thinking" {
			out = append(out, ev(p.Delay, "content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "thinking_delta", "thinking": p.Reasoning}}))
		} else {
			out = append(out, ev(p.Delay, "content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "text_delta", "text": p.Text}}))
		}
	}
	if a.NoEnd {
		return out
	}
	closeBlock()
	out = append(out, ev(0, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": a.TokensOut}}))
	return append(out, ev(0, "message_stop", map[string]any{"type": "message_stop"}))
}

// ollamaStream: one JSON object per line; the last has done:true,
// done_reason and the counts and durations.
func ollamaStream(a Answer) []Chunk {
	const created = "2026-11-28T06:00:00.123456789Z"
	line := func(delay time.Duration, v any) Chunk { return Chunk{Delay: delay, Data: js(v) + "\n"} }
	var out []Chunk
	for _, p := range a.Parts {
		msg := map[string]any{"role": "assistant", "content": p.Text}
		if p.Reasoning != "" {
			msg = map[string]any{"role": "assistant", "content": "", "thinking": p.Reasoning}
		}
		out = append(out, line(p.Delay, map[string]any{"model": a.Model, "created_at": created, "message": msg, "done": false}))
	}
	if a.NoEnd {
		return out
	}
	return append(out, line(0, map[string]any{
		"model": a.Model, "created_at": created, "message": map[string]any{"role": "assistant", "content": ""},
		"done_reason": "stop", "done": true, "total_duration": 4353619900, "load_duration": 63915300,
		"prompt_eval_count": a.TokensIn, "prompt_eval_duration": 246847000, "eval_count": a.TokensOut, "eval_duration": 4032296000,
	}))
}

// llamaStream: "data:" events with content, stop:false and running
// counts; the last has stop:true, the final counts, stop_type and
// timings; no [DONE].
func llamaStream(a Answer) []Chunk {
	ev := func(delay time.Duration, v any) Chunk { return Chunk{Delay: delay, Data: "data: " + js(v) + "\n\n"} }
	var out []Chunk
	n := 0
	for _, p := range a.Parts {
		if p.Text == "" {
			continue
		}
		n++
		out = append(out, ev(p.Delay, map[string]any{"index": 0, "content": p.Text, "tokens": []int{}, "stop": false, "id_slot": 0, "tokens_predicted": n, "tokens_evaluated": a.TokensIn}))
	}
	if a.NoEnd {
		return out
	}
	return append(out, ev(0, map[string]any{
		"index": 0, "content": "", "tokens": []int{}, "id_slot": 0, "stop": true, "model": a.Model,
		"tokens_predicted": a.TokensOut, "tokens_evaluated": a.TokensIn, "has_new_line": false, "truncated": false,
		"stop_type": "eos", "stopping_word": "", "tokens_cached": a.TokensIn + a.TokensOut - 1,
		"timings": map[string]any{"prompt_n": a.TokensIn, "prompt_ms": 41.2, "predicted_n": a.TokensOut, "predicted_ms": 310.5},
	}))
}

// ErrorEvent is an error reported inside a 200 stream, in kind's
// shape; message is the provider's text (tests put a marker in it).
func ErrorEvent(kind, message string) Chunk {
	switch kind {
	case "cloud-b":
		return Chunk{Data: "event: error\ndata: " + js(map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": message}}) + "\n\n"}
	case "local-a":
		return Chunk{Data: js(map[string]any{"error": message}) + "\n"}
	case "local-b":
		return Chunk{Data: "data: " + js(map[string]any{"error": map[string]any{"code": 500, "message": message, "type": "server_error"}}) + "\n\n"}
	}
	return Chunk{Data: "data: " + js(map[string]any{"error": map[string]any{"message": message, "type": "server_error", "param": nil, "code": "server_error"}}) + "\n\n"}
}

// errorBody is kind's JSON error body for a failed request.
func errorBody(kind string, status int, message string) string {
	switch kind {
	case "cloud-b":
		t := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}[status]
		if t == "" {
			t = "api_error"
		}
		return js(map[string]any{"type": "error", "error": map[string]any{"type": t, "message": message}})
	case "local-a":
		return js(map[string]any{"error": message})
	case "local-b":
		t := map[int]string{400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error", 503: "unavailable_error"}[status]
		if t == "" {
			t = "server_error"
		}
		return js(map[string]any{"error": map[string]any{"code": status, "message": message, "type": t}})
	}
	code := map[int]any{401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}[status]
	t := map[int]string{401: "invalid_request_error", 404: "invalid_request_error", 429: "requests"}[status]
	if t == "" {
		t = "server_error"
	}
	return js(map[string]any{"error": map[string]any{"message": message, "type": t, "param": nil, "code": code}})
}

func writeError(w http.ResponseWriter, kind string, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(errorBody(kind, status, message) + "\n"))
}

// ErrorScript answers a chat with status and kind's error body holding
// message; retryAfter, when not empty, is sent as Retry-After.
func ErrorScript(kind string, status int, message, retryAfter string) Script {
	sc := Script{Status: status, Chunks: []Chunk{{Data: errorBody(kind, status, message) + "\n"}}}
	if retryAfter != "" {
		sc.Header = map[string]string{"Retry-After": retryAfter}
	}
	return sc
}

// modelList is kind's model-list body.
func modelList(kind string, names []string) any {
	switch kind {
	case "local-a":
		models := []any{}
		for _, n := range names {
			models = append(models, map[string]any{"name": n, "model": n, "modified_at": "2026-11-01T10:00:00Z", "size": 397821319, "digest": strings.Repeat("ab", 32),
				"details": map[string]any{"format": "gguf", "family": "qwen3", "parameter_size": "0.6B", "quantization_level": "Q4_K_M"}})
		}
		return map[string]any{"models": models}
	case "cloud-b":
		data := []any{}
		for _, n := range names {
			data = append(data, map[string]any{"type": "model", "id": n, "display_name": strings.ToUpper(n[:1]) + n[1:], "created_at": "2026-10-01T00:00:00Z"})
		}
		first, last := any(nil), any(nil)
		if len(names) > 0 {
			first, last = names[0], names[len(names)-1]
		}
		return map[string]any{"data": data, "has_more": false, "first_id": first, "last_id": last}
	}
	data := []any{}
	for i, n := range names {
		data = append(data, map[string]any{"id": n, "object": "model", "created": 1764000000 + i, "owned_by": ownedBy(kind)})
	}
	return map[string]any{"object": "list", "data": data}
}

func ownedBy(kind string) string {
	if kind == "local-b" {
		return "llamacpp"
	}
	return "fake"
}

// RetryDate formats t as an HTTP-date for Retry-After.
func RetryDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// Seconds formats n as delay-seconds for Retry-After.
func Seconds(n int) string { return strconv.Itoa(n) }
