package agentmode

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"netmon/agentmode/wire"
)

// requestTimeout bounds one call to the hub, body included.
const requestTimeout = 30 * time.Second

// maxAnswerBytes bounds what is read of an answer: the hub's answers are
// small JSON objects.
const maxAnswerBytes = 1 << 20

// StatusError is a non-200 answer of the hub.
type StatusError struct {
	Code int
	// Message is the hub's {"error": "..."} text, if any.
	Message string
	// RetryAfter is the hub's Retry-After (429), zero when absent.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("hub answered %d: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("hub answered %d %s", e.Code, http.StatusText(e.Code))
}

// hubClient posts JSON to the hub's agent routes.
type hubClient struct {
	base  string // hub.url without trailing slash
	ua    string
	trust *trust
}

// post sends in as JSON to path and decodes a 200 answer into out. It
// returns the TLS state of the connection (nil over http), which the
// first hello needs to pin the hub's CA.
func (c *hubClient) post(ctx context.Context, path string, hdr http.Header, in, out any) (*tls.ConnectionState, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("post %s: %w", path, err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.ua)
	resp, err := c.trust.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("post %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return resp.TLS, fmt.Errorf("read answer of %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		se := &StatusError{Code: resp.StatusCode}
		var eb wire.ErrorBody
		if json.Unmarshal(raw, &eb) == nil {
			se.Message = eb.Error
		}
		if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s > 0 {
			se.RetryAfter = time.Duration(s) * time.Second
		}
		return resp.TLS, se
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return resp.TLS, fmt.Errorf("decode answer of %s: %w", path, err)
	}
	return resp.TLS, nil
}

func bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}
