package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"netmon/app/netguard"
	"netmon/store/record"
)

// ErrPermanent marks a failure a retry cannot fix (a 4xx other than 408
// and 429, a refused address, an authentication failure): the delivery
// is marked failed at once.
var ErrPermanent = errors.New("permanent")

// ErrDisabled is a send to a channel the settings do not configure.
var ErrDisabled = errors.New("channel not configured")

// permanent wraps err as ErrPermanent.
func permanent(err error) error { return fmt.Errorf("%w: %w", ErrPermanent, err) }

// httpStatusError is a non-2xx answer. It carries the status only: the
// remote body never reaches the delivery log or a test answer.
type httpStatusError struct{ status int }

func (e httpStatusError) Error() string {
	return "remote answered " + strconv.Itoa(e.status) + " " + strings.ToLower(http.StatusText(e.status))
}

// SignatureHeader and TimestampHeader are webhook v2's headers.
const (
	SignatureHeader = "X-Netmon-Signature"
	TimestampHeader = "X-Netmon-Timestamp"
)

// Sign returns the webhook v2 signature of body sent at ts:
// "sha256=" + hex(HMAC-SHA256(secret, ts + "." + body)).
func Sign(secret string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte("."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// send delivers ev to one channel with the settings in force. Its error
// is classified (reason.go): the delivery log and a "send test" show
// why, never a URL, an address or the peer's words.
func (n *Notifier) send(ctx context.Context, channel string, s Settings, ev record.AlertEvent, delivery int64) error {
	return fail(n.sendTo(ctx, channel, s, ev, delivery))
}

func (n *Notifier) sendTo(ctx context.Context, channel string, s Settings, ev record.AlertEvent, delivery int64) error {
	if !s.enabled(channel) {
		return permanent(ErrDisabled)
	}
	switch channel {
	case GenericURL:
		return n.postJSON(ctx, s.GenericURL, ev, nil)
	case Chatapp1:
		return n.postJSON(ctx, s.Chatapp1URL, chat1Body{Text: summary(ev)}, nil)
	case Chatapp2:
		return n.postJSON(ctx, s.Chatapp2URL, chat2(ev), nil)
	case Messenger:
		u := strings.TrimRight(n.cfg.MessengerBaseURL, "/") + "/bot" + url.PathEscape(s.MessengerToken) + "/sendMessage"
		return n.postJSON(ctx, u, messengerBody{ChatID: s.MessengerChatID, Text: summary(ev)}, nil)
	case Teamchat:
		return n.postJSON(ctx, s.TeamchatURL, card(ev), nil)
	case WebhookV2:
		body, err := json.Marshal(webhookV2Body{Version: 2, Delivery: delivery, Event: ev})
		if err != nil {
			return permanent(err)
		}
		ts := n.now().Unix()
		h := http.Header{}
		h.Set(TimestampHeader, strconv.FormatInt(ts, 10))
		h.Set(SignatureHeader, Sign(s.WebhookV2Secret, ts, body))
		h.Set("X-Netmon-Delivery", strconv.FormatInt(delivery, 10))
		return n.post(ctx, s.WebhookV2URL, body, h)
	case Email:
		return n.sendMail(ctx, s, ev)
	case SIEMChan:
		return n.sendSIEM(ctx, s.SIEM, ev)
	case Ticket:
		return n.sendTicket(ctx, s, ev)
	}
	return permanent(ErrDisabled)
}

func (n *Notifier) postJSON(ctx context.Context, u string, v any, h http.Header) error {
	body, err := json.Marshal(v)
	if err != nil {
		return permanent(err)
	}
	return n.post(ctx, u, body, h)
}

// post sends body as JSON through the guarded client. The error names
// the status but never the URL (its path is often the credential) nor
// the remote body.
func (n *Notifier) post(ctx context.Context, u string, body []byte, h http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return permanent(errBadURL)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "netmon-notify/1")
	resp, err := n.client.Do(req)
	if err != nil {
		return classify(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch st := resp.StatusCode; {
	case st/100 == 2:
		return nil
	case st == http.StatusRequestTimeout || st == http.StatusTooManyRequests || st >= 500:
		return httpStatusError{st}
	default:
		return permanent(httpStatusError{st})
	}
}

// classify strips the URL from a client error (url.Error quotes it) and
// marks refusals of the guard permanent; send names the rest (reason.go).
func classify(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, netguard.ErrBlocked) {
		return permanent(err)
	}
	return err
}
