package auth

import (
	"context"

	"netmon/store"
)

// Auditor completes the audit records of auth's actions: app/audit's
// Builder, handed in by app/hub (services do not import each other). auth
// describes an action in ev — who, action, target, result, detail — and
// Event adds the time and the request carried by ctx and marshals before
// and after with every secret masked.
type Auditor interface {
	Event(ctx context.Context, ev store.AuditEvent, before, after any) store.AuditEvent
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

// auditActor is who acted, as the chain records it.
type auditActor struct {
	Username, Role, ActorType string
}

// event builds the record of an action.
func (s *Service) event(ctx context.Context, who auditActor, action, target, result, detail string, before, after any) store.AuditEvent {
	return s.auditor.Event(ctx, store.AuditEvent{Username: who.Username, Role: who.Role, ActorType: who.ActorType,
		Action: action, Target: target, Result: result, Detail: detail}, before, after)
}
