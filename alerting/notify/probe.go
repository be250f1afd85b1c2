package notify

import (
	"context"
	"fmt"
	"slices"

	"netmon/app/errs"
	"netmon/store"
)

// The "send test" of a channel (POST /api/v1/alerts/channels/{channel}/test)
// is this package's too: it sends through the notifier and records the
// attempt in the audit chain, whatever its outcome.

// Tester sends a test event on a channel (*Notifier).
type Tester interface {
	Test(ctx context.Context, channel string) error
}

// AuditLog appends audit records (*store.DB).
type AuditLog interface {
	AppendAudit(ctx context.Context, e store.AuditEvent) (store.AuditEvent, error)
}

// ActionChannelTest is the audit action of a "send test" (result error:
// the send failed).
const ActionChannelTest = "alert.channel.test"

const resultError = "error"

// Probe runs operators' "send test" of a channel.
type Probe struct {
	tester  Tester
	log     AuditLog
	auditor Auditor
}

// NewProbe returns the probe; a nil tester answers 503 (delivery not
// running).
func NewProbe(t Tester, log AuditLog, a Auditor) *Probe {
	return &Probe{tester: t, log: log, auditor: a}
}

// Test sends a test on channel for who and records it. ok false comes
// with reason, one of notify's reasons (a status, a refusal,
// "authentication failed", ...), never the peer's words, its body or the
// channel's URL; err is for what kept the test from being made or
// recorded.
func (p *Probe) Test(ctx context.Context, who store.AuditActor, channel string) (ok bool, reason string, err error) {
	if !slices.Contains(Channels, channel) {
		return false, "", errs.InvalidField("channel", "unknown channel %q", channel)
	}
	if p.tester == nil {
		return false, "", errs.Unavailablef(0, "alert delivery is not running")
	}
	ok, result := true, resultOK
	if err := p.tester.Test(ctx, channel); err != nil {
		ok, reason, result = false, err.Error(), resultError
	}
	ev := p.auditor.Event(ctx, who, ActionChannelTest, "alert_channels/"+channel, result, reason, nil, nil)
	if _, err := p.log.AppendAudit(ctx, ev); err != nil {
		return false, "", fmt.Errorf("audit channel test: %w", err)
	}
	return ok, reason, nil
}
