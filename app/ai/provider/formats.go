package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// wireMessage is {"role","content"}, shared by the four formats.
type wireMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatMessages puts System first as a "system" message (OpenAI, Ollama,
// llama.cpp's template) followed by the turns.
func chatMessages(req Request) []wireMessage {
	out := make([]wireMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, wireMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		out = append(out, wireMessage(m))
	}
	return out
}

// ---- cloud-a and compat: OpenAI Chat Completions ----

type openAIRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Stream              bool            `json:"stream"`
	StreamOptions       map[string]bool `json:"stream_options"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	ChatTemplateKwargs  map[string]any  `json:"chat_template_kwargs,omitempty"`
}

// openAIBody: cloud-a sends max_completion_tokens (OpenAI deprecated
// max_tokens for it, and its reasoning models refuse max_tokens);
// compat sends max_tokens, which every compatible server reads, and for
// NoThink the chat_template_kwargs.enable_thinking=false that vLLM,
// SGLang and llama.cpp pass to Qwen3-style templates.
func openAIBody(kind Kind, req Request) openAIRequest {
	b := openAIRequest{
		Model: req.Model, Messages: chatMessages(req), Stream: true,
		StreamOptions: map[string]bool{"include_usage": true},
		Temperature:   req.Temperature,
	}
	if kind == CloudA {
		b.MaxCompletionTokens = req.MaxTokens
	} else {
		b.MaxTokens = req.MaxTokens
		if req.NoThink {
			b.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
		}
	}
	return b
}

type openAIParser struct {
	compat    bool
	sawFinish bool
	in, out   int
}

func (p *openAIParser) feed(f frame) (string, bool, *Error) {
	data := bytes.TrimSpace(f.data)
	if string(data) == "[DONE]" {
		return "", true, nil
	}
	var c struct {
		Choices []struct {
			Delta struct {
				// Content only: reasoning_content (DeepSeek, vLLM) and
				// reasoning (OpenRouter, Ollama's /v1) are not decoded.
				Content *string `json:"content"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return "", false, &Error{Class: BadResponse, Detail: "a stream chunk is not JSON"}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return "", false, &Error{Class: Remote, Code: errorCode(append(append([]byte(`{"error":`), c.Error...), '}')), Detail: "error reported in the stream"}
	}
	if c.Usage != nil {
		p.in, p.out = c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	var text string
	if len(c.Choices) > 0 {
		if c.Choices[0].Delta.Content != nil {
			text = *c.Choices[0].Delta.Content
		}
		if c.Choices[0].FinishReason != nil && *c.Choices[0].FinishReason != "" {
			p.sawFinish = true
		}
	}
	return text, false, nil
}

func (p *openAIParser) eofDone() bool     { return p.compat && p.sawFinish }
func (p *openAIParser) usage() (int, int) { return p.in, p.out }

// ---- cloud-b: Anthropic Messages ----

type anthropicRequest struct {
	Model       string        `json:"model"`
	System      string        `json:"system,omitempty"`
	Messages    []wireMessage `json:"messages"`
	MaxTokens   int           `json:"max_tokens"`
	Stream      bool          `json:"stream"`
	Temperature *float64      `json:"temperature,omitempty"`
}

// anthropicBody: the Messages API has no "system" role; system turns
// join the top-level system prompt. Extended thinking is off unless a
// "thinking" block is sent, so NoThink needs nothing on the wire.
func anthropicBody(req Request) anthropicRequest {
	system := []string{}
	if req.System != "" {
		system = append(system, req.System)
	}
	msgs := make([]wireMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		if m.Role == "system" {
			system = append(system, m.Content)
			continue
		}
		msgs = append(msgs, wireMessage(m))
	}
	limit := req.MaxTokens
	if limit <= 0 {
		limit = DefaultMaxTokens
	}
	return anthropicRequest{Model: req.Model, System: strings.Join(system, "\n\n"), Messages: msgs, MaxTokens: limit, Stream: true, Temperature: req.Temperature}
}

type anthropicParser struct{ in, out int }

type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// total is the whole prompt: with prompt caching, input_tokens counts
// only the part after the last cache breakpoint.
func (u anthropicUsage) total() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

func (p *anthropicParser) feed(f frame) (string, bool, *Error) {
	var e struct {
		Type    string `json:"type"`
		Message struct {
			Usage anthropicUsage `json:"usage"`
		} `json:"message"`
		ContentBlock struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content_block"`
		Delta struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
		Usage *anthropicUsage `json:"usage"`
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if err := json.Unmarshal(f.data, &e); err != nil {
		return "", false, &Error{Class: BadResponse, Detail: "a stream event is not JSON"}
	}
	kind := f.event
	if kind == "" {
		kind = e.Type
	}
	switch kind {
	case "message_start":
		p.in, p.out = e.Message.Usage.total(), e.Message.Usage.OutputTokens
	case "content_block_start":
		if e.ContentBlock.Type == "text" {
			return e.ContentBlock.Text, false, nil
		}
	case "content_block_delta":
		// thinking_delta, signature_delta and input_json_delta are dropped.
		if e.Delta.Type == "text_delta" {
			return e.Delta.Text, false, nil
		}
	case "message_delta":
		if e.Usage != nil {
			p.out = e.Usage.OutputTokens // cumulative, per the docs
			if t := e.Usage.total(); t > 0 {
				p.in = t
			}
		}
	case "message_stop":
		return "", true, nil
	case "error":
		return "", false, &Error{Class: anthropicErrorClass(e.Error.Type), Code: cleanCode(e.Error.Type), Detail: "error event in the stream"}
	}
	// ping, content_block_stop and event types added later are ignored,
	// as Anthropic's versioning policy asks.
	return "", false, nil
}

// anthropicErrorClass maps the documented error types to classes.
func anthropicErrorClass(t string) Class {
	switch t {
	case "rate_limit_error":
		return RateLimited
	case "overloaded_error", "api_error":
		return Server
	case "authentication_error", "permission_error":
		return Unauthorized
	case "not_found_error":
		return NotFound
	case "invalid_request_error", "request_too_large":
		return BadRequest
	}
	return Remote
}

func (p *anthropicParser) eofDone() bool     { return false }
func (p *anthropicParser) usage() (int, int) { return p.in, p.out }

// ---- local-a: Ollama /api/chat ----

type ollamaRequest struct {
	Model    string         `json:"model"`
	Messages []wireMessage  `json:"messages"`
	Stream   bool           `json:"stream"`
	Think    *bool          `json:"think,omitempty"`
	Options  map[string]any `json:"options,omitempty"`
}

// ollamaBody: num_predict is Ollama's max_tokens; think:false turns
// reasoning off on thinking models. It is sent only for NoThink, so a
// default request is the plain shape every Ollama version accepts.
func ollamaBody(req Request) ollamaRequest {
	b := ollamaRequest{Model: req.Model, Messages: chatMessages(req), Stream: true}
	if req.NoThink {
		f := false
		b.Think = &f
	}
	opts := map[string]any{}
	if req.MaxTokens > 0 {
		opts["num_predict"] = req.MaxTokens
	}
	if req.Temperature != nil {
		opts["temperature"] = *req.Temperature
	}
	if len(opts) > 0 {
		b.Options = opts
	}
	return b
}

type ollamaParser struct{ in, out int }

func (p *ollamaParser) feed(f frame) (string, bool, *Error) {
	var o struct {
		Message struct {
			Content string `json:"content"` // message.thinking is not decoded
		} `json:"message"`
		Done            bool    `json:"done"`
		PromptEvalCount int     `json:"prompt_eval_count"`
		EvalCount       int     `json:"eval_count"`
		Error           *string `json:"error"`
	}
	if err := json.Unmarshal(f.data, &o); err != nil {
		return "", false, &Error{Class: BadResponse, Detail: "a stream line is not JSON"}
	}
	if o.Error != nil {
		return "", false, &Error{Class: Remote, Detail: "error line in the stream"}
	}
	if o.Done {
		p.in, p.out = o.PromptEvalCount, o.EvalCount
	}
	return o.Message.Content, o.Done, nil
}

func (p *ollamaParser) eofDone() bool     { return false }
func (p *ollamaParser) usage() (int, int) { return p.in, p.out }

// ---- local-b: llama.cpp server, native /completion ----

type llamaTemplateRequest struct {
	Messages           []wireMessage  `json:"messages"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
}

// llamaTemplate renders the conversation to a prompt with the model's
// own chat template (POST /apply-template → {"prompt"}), since
// /completion takes raw text and the template belongs to the model.
func (c *client) llamaTemplate(ctx context.Context, req Request, wd *watchdog) (string, error) {
	body := llamaTemplateRequest{Messages: chatMessages(req)}
	if req.NoThink {
		body.ChatTemplateKwargs = map[string]any{"enable_thinking": false}
	}
	resp, err := c.do(ctx, "chat", http.MethodPost, "/apply-template", body, wd, ctx)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxResponseBytes+1))
	if err != nil {
		return "", c.transportError("chat", err, wd, ctx)
	}
	var v struct {
		Prompt *string `json:"prompt"`
	}
	if int64(len(b)) > c.opts.MaxResponseBytes || json.Unmarshal(b, &v) != nil || v.Prompt == nil {
		return "", &Error{Kind: c.kind, Op: "chat", Class: BadResponse, Detail: "apply-template gave no prompt"}
	}
	return *v.Prompt, nil
}

type llamaRequest struct {
	Prompt      string   `json:"prompt"`
	Stream      bool     `json:"stream"`
	NPredict    int      `json:"n_predict,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	CachePrompt bool     `json:"cache_prompt"`
}

// llamaBody: n_predict is llama.cpp's max_tokens; cache_prompt reuses
// the KV cache of the conversation's earlier turns.
func llamaBody(req Request, prompt string) llamaRequest {
	return llamaRequest{Prompt: prompt, Stream: true, NPredict: req.MaxTokens, Temperature: req.Temperature, CachePrompt: true}
}

type llamaParser struct{ in, out int }

func (p *llamaParser) feed(f frame) (string, bool, *Error) {
	var o struct {
		Content         string          `json:"content"`
		Stop            bool            `json:"stop"`
		TokensPredicted int             `json:"tokens_predicted"`
		TokensEvaluated int             `json:"tokens_evaluated"`
		Error           json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(f.data, &o); err != nil {
		return "", false, &Error{Class: BadResponse, Detail: "a stream event is not JSON"}
	}
	if len(o.Error) > 0 && string(o.Error) != "null" {
		return "", false, &Error{Class: Remote, Code: errorCode(append(append([]byte(`{"error":`), o.Error...), '}')), Detail: "error event in the stream"}
	}
	if o.Stop {
		p.in, p.out = o.TokensEvaluated, o.TokensPredicted
	}
	return o.Content, o.Stop, nil
}

func (p *llamaParser) eofDone() bool     { return false }
func (p *llamaParser) usage() (int, int) { return p.in, p.out }
