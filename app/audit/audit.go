// Package audit builds the records of the tamper-evident audit chain
// (spec sections 2.10 and 6.5): who did what to which object, from where,
// with what result, and the before/after state with every secret masked.
// The chain itself (hashing, serialised appends, verification) lives in
// the store, next to the table, so a privileged change and its record
// commit in one transaction.
//
// It is a small leaf of the app layer: services import it to describe
// their actions; it imports only the store's entity type.
package audit

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"netmon/store"
)

// Results of an audited action.
const (
	ResultOK     = "ok"
	ResultError  = "error"
	ResultDenied = "denied"
)

// Actions recorded so far. Later features add theirs here, so the list of
// what the chain can contain is in one place.
const (
	ActionLogin        = "login"         // a sign-in (result error: a failed one)
	ActionLogout       = "logout"        // a sign-out
	ActionAccessDenied = "access.denied" // a route refused for lack of permission
	ActionUserCreate   = "user.create"   // a user created
	ActionUserUpdate   = "user.update"   // a user's role, site, enabled flag or password changed (the password masked)
	ActionUserDelete   = "user.delete"   // a user deleted
	ActionTokenCreate  = "token.create"  // an API token created
	ActionTokenDelete  = "token.delete"  // an API token revoked
	ActionCaptureStart = "capture.start" // the hub capture started (result error: the interface did not open)
	ActionCaptureStop  = "capture.stop"  // the hub capture stopped
	ActionRecordStart  = "record.start"  // a PCAP recording started
	ActionRecordStop   = "record.stop"   // a PCAP recording stopped

	ActionEnrollTokenCreate = "enroll_token.create"        // an agent enrollment token created
	ActionEnrollTokenRevoke = "enroll_token.revoke"        // an agent enrollment token revoked
	ActionEnrollTokenUsed   = "enroll_token.used"          // an agent enrolled (result error: refused hello)
	ActionStaticTokenRotate = "enroll_token.rotate_static" // the hub's generated static enroll token replaced
	ActionAgentUpdate       = "agent.update"               // an agent's display name changed
	ActionAgentDelete       = "agent.delete"               // an agent deleted by an operator, or archived after -agent-archive-days offline

	ActionAlertsUpdate       = "alerts.update"        // the alert configuration (secrets masked)
	ActionAlertAck           = "alert.ack"            // an alert event acknowledged
	ActionAlertResolve       = "alert.resolve"        // an alert event resolved by an operator
	ActionAlertNote          = "alert.note"           // a note added to an alert event
	ActionAlertSilenceCreate = "alert.silence.create" // a silence created
	ActionAlertSilenceDelete = "alert.silence.delete" // a silence deleted
	ActionAlertRouteCreate   = "alert.route.create"   // a notification routing rule created
	ActionAlertRouteUpdate   = "alert.route.update"   // a notification routing rule changed
	ActionAlertRouteDelete   = "alert.route.delete"   // a notification routing rule deleted
	ActionAlertChannelTest   = "alert.channel.test"   // a "send test" (result error: the send failed)

	ActionComplianceReview   = "compliance.review"   // a log or access review recorded (spec 6.5)
	ActionComplianceEvidence = "compliance.evidence" // an evidence bundle downloaded (detail: range, masked)
	ActionISMSCreate         = "isms.create"         // an ISMS register entry (asset, risk, SoA line) created
	ActionISMSUpdate         = "isms.update"         // an ISMS register entry changed (before and after)

	ActionDeviceCreate = "device.create" // a device added (its credentials never in the record)
	ActionDeviceDelete = "device.delete" // a device deleted, with its samples
	ActionUplinkSet    = "uplink.set"    // a manual topology uplink of an agent or device set

	ActionReportGenerate       = "report.generate"        // a report generated on request (detail: type, range, site, format, SHA-256)
	ActionReportScheduleCreate = "report.schedule.create" // a scheduled report created
	ActionReportScheduleDelete = "report.schedule.delete" // a scheduled report deleted
	ActionReportScheduleRun    = "report.schedule.run"    // a scheduled report run (by the scheduler, or "run now")
	ActionReportArchiveDelete  = "report.archive.delete"  // an archived report deleted
	ActionAIAnalyze            = "ai.analyze"             // an exchange with the assistant (detail: scope, provider, model, tokens, SHA-256 of the context and of the request)
	ActionAIProviderCreate     = "ai.provider.create"     // an AI provider added (the key masked: has_key)
	ActionAIProviderUpdate     = "ai.provider.update"     // an AI provider changed (the key masked; detail says when it was replaced)
	ActionAIProviderDelete     = "ai.provider.delete"     // an AI provider deleted
	ActionSLATargetCreate      = "sla.target.create"      // an SLA target created
	ActionSLATargetDelete      = "sla.target.delete"      // an SLA target deleted

	// incident.<op>: an operator moved an incident (ack, investigate,
	// resolve, close).
	ActionIncidentPrefix = "incident."
)

// Request is what the chain records of the HTTP request behind an action.
type Request struct {
	IP        string
	RequestID string
	UserAgent string
}

type requestKey struct{}

// WithRequest returns ctx carrying r; the API sets it for every request.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestFrom returns the request carried by ctx (zero when none, e.g. the
// admin CLI).
func RequestFrom(ctx context.Context) Request {
	r, _ := ctx.Value(requestKey{}).(Request)
	return r
}

// Actor is who acted.
type Actor = store.AuditActor

// Event builds a record. before and after (nil for none) are marshalled to
// JSON with secret fields masked.
func Event(ctx context.Context, actor Actor, action, target, result, detail string, before, after any) store.AuditEvent {
	req := RequestFrom(ctx)
	return store.AuditEvent{
		TS:         time.Now().Unix(),
		Username:   clip(actor.Username, 128),
		Role:       actor.Role,
		Action:     action,
		Target:     clip(target, 256),
		Detail:     clip(detail, 1024),
		IP:         req.IP,
		ActorType:  actor.ActorType,
		RequestID:  req.RequestID,
		UserAgent:  clip(req.UserAgent, 256),
		Result:     result,
		BeforeJSON: Mask(before),
		AfterJSON:  Mask(after),
	}
}

// Masked replaces the value of a secret field.
const Masked = "***"

// secretWords mark a field as secret when its name contains one of them.
var secretWords = []string{"password", "passwd", "secret", "token", "api_key", "apikey", "key", "hash", "community", "pass", "credential", "private"}

// Mask marshals v to JSON with the value of every field whose name looks
// secret replaced by "***", at any depth. nil gives "".
func Mask(v any) string {
	if v == nil {
		return ""
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return ""
	}
	out, err := json.Marshal(maskTree(tree))
	if err != nil {
		return ""
	}
	return string(out)
}

func maskTree(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if isSecret(k) {
				if val != nil && val != "" {
					x[k] = Masked
				}
				continue
			}
			x[k] = maskTree(val)
		}
		return x
	case []any:
		for i := range x {
			x[i] = maskTree(x[i])
		}
		return x
	case string:
		if credentialURL(x) {
			return Masked
		}
	}
	return v
}

// credentialURL reports a URL carrying a credential whatever its field is
// called (a SIEM target, a webhook): userinfo, or a query parameter named
// like a secret (?token=, ?key=, ?api_key=). Issue 28.
func credentialURL(s string) bool {
	if !strings.Contains(s, "://") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		// Unparseable but URL-like: it may be a credential all the same.
		return err != nil
	}
	if u.User != nil {
		return true
	}
	for k := range u.Query() {
		if isSecret(k) {
			return true
		}
	}
	return false
}

func isSecret(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// clip bounds a client-supplied string without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// Builder is Event as a method: the Auditor that services which do not
// import this package (app/auth, app/fleet) declare, handed in by
// app/hub.
type Builder struct{}

// Event builds a record, as the package-level Event does.
func (Builder) Event(ctx context.Context, actor Actor, action, target, result, detail string, before, after any) store.AuditEvent {
	return Event(ctx, actor, action, target, result, detail, before, after)
}
