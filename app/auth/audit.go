package auth

import (
	"context"

	"netmon/store"
)

// Auditor builds the audit records of auth's actions: app/audit's
// Builder, handed in by app/hub (services do not import each other). It
// stamps the time and the request carried by ctx and marshals before and
// after with every secret masked.
type Auditor interface {
	Event(ctx context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent
}

// The actions and results auth records. app/audit lists every action of
// the chain; its tests hold these equal to that list.
const (
	ActionLogin        = "login"         // result ok or error (a failed login)
	ActionLogout       = "logout"        //
	ActionAccessDenied = "access.denied" // a route refused for lack of permission
	ActionUserCreate   = "user.create"   //
	ActionUserUpdate   = "user.update"   // role, site, enabled or password (masked)
	ActionUserDelete   = "user.delete"   //
	ActionTokenCreate  = "token.create"  // API token
	ActionTokenDelete  = "token.delete"  // API token revoked

	ResultOK     = "ok"
	ResultError  = "error"
	ResultDenied = "denied"
)

// event builds the record of an action.
func (s *Service) event(ctx context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent {
	return s.auditor.Event(ctx, who, action, target, result, detail, before, after)
}
