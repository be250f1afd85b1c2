package api

import (
	"netmon/alerting"
	"netmon/alerting/incident"
	"netmon/app/api/router"
	"netmon/app/auth"
	"netmon/store/record"
)

// enums are the closed sets of values the API names as components of its
// document (string schemas with an enum), so a client generates them
// rather than copying them: the console's generated types carry them as
// union types and value lists (ui/web scripts/gen-api.mjs). Each set is
// declared once in Go, by its owner where one exists (alerting.Kinds,
// auth.Roles and auth.Permissions); TestEnumTags holds the parameter and
// field tags that repeat a set to the same values.
func enums() []router.Enum {
	var roles []string
	for _, r := range auth.Roles(true) {
		roles = append(roles, string(r))
	}
	var perms []string
	for _, p := range auth.Permissions() {
		perms = append(perms, string(p))
	}
	var windows []string
	for _, w := range flowWindows() {
		windows = append(windows, w.name)
	}
	return []router.Enum{
		{Name: "AlertKind", Description: "the rule that raised an alert event (spec 6.3)", Values: alerting.Kinds()},
		{Name: "AlertState", Description: "the state of an alert event", Values: []string{record.AlertFiring, record.AlertAck, record.AlertResolved}},
		{Name: "IncidentState", Description: "the state of an incident; open, ack and investigating count as open", Values: incidentStates()},
		{Name: "FlowWindow", Description: "a window of GET /api/v1/flows/conversations, ending now", Values: windows},
		{Name: "Role", Description: "an RBAC role, most privileged first; site-admin and global-admin exist in multi-site mode only (x-netmon-roles)", Values: roles},
		{Name: "Permission", Description: "a permission of the role matrix (x-netmon-roles); x-netmon-permission of an operation names the one it needs", Values: perms},
	}
}

// roleMatrix is the document's x-netmon-roles: each role's permissions in
// each mode (single_site, multi_site), from app/auth. A console shows the
// caller's from /api/auth/status (permissions) and uses this one only to
// describe roles, e.g. when assigning one.
func roleMatrix() map[string]any {
	mode := func(multiSite bool) map[string][]string {
		m := map[string][]string{}
		for _, r := range auth.Roles(multiSite) {
			perms := []string{}
			for _, p := range auth.PermissionsOf(r, multiSite) {
				perms = append(perms, string(p))
			}
			m[string(r)] = perms
		}
		return m
	}
	return map[string]any{"single_site": mode(false), "multi_site": mode(true)}
}

func incidentStates() []string {
	return []string{record.IncidentOpen, record.IncidentAck, record.IncidentInvestigating, record.IncidentResolved, record.IncidentClosed}
}

// incidentOps is the document's x-netmon-incident-ops: for each incident
// state, the operations (POST /api/v1/incidents/{id}/{op}) the state
// machine of alerting/incident allows from it, so a console offers those
// buttons without a copy of the machine.
func incidentOps() map[string][]string {
	m := map[string][]string{}
	for _, st := range incidentStates() {
		ops := []string{}
		for _, op := range []string{incident.OpAck, incident.OpInvestigate, incident.OpResolve, incident.OpClose} {
			if _, err := incident.Next(st, op); err == nil {
				ops = append(ops, op)
			}
		}
		m[st] = ops
	}
	return m
}
