// Package auth is the one place that answers "who is this, and may they do
// that here?": login and sessions, the legacy bootstrap password, RBAC
// users and roles, API tokens, the permission matrix of spec section 5,
// site scope, and the login/enrollment throttle.
//
// It sits beside the other app services: app/hub builds it over the store
// (through the small Store interface below) and app/api calls it from one
// middleware driven by the route table's permission column. It imports
// store for its entity types; audit records are completed by the Auditor
// app/hub hands in (app/audit), since services do not import each other.
package auth

import "slices"

// Role is an RBAC role.
type Role string

// The roles of spec section 5. SiteAdmin and GlobalAdmin exist only in
// multi-site mode.
const (
	RoleAdmin       Role = "admin"
	RoleNetOps      Role = "netops"
	RoleAnalyst     Role = "analyst"
	RoleViewer      Role = "viewer"
	RoleSiteAdmin   Role = "site-admin"
	RoleGlobalAdmin Role = "global-admin"
	// RoleAuditor is netmon's addition to the spec's roles (issue 21): an
	// external auditor reads (view, the audit log, compliance evidence
	// and reviews) and changes nothing anywhere.
	RoleAuditor Role = "auditor"
)

// Permission is a permission of the matrix in spec section 5 item 7.
type Permission string

// The permissions.
const (
	PermView         Permission = "view"
	PermOperate      Permission = "operate"
	PermAnalyze      Permission = "analyze"
	PermDevices      Permission = "devices"
	PermManageAgents Permission = "agents"
	PermAdmin        Permission = "admin"
	PermGlobalAdmin  Permission = "global-admin"
	// PermAudit reads the audit log and the compliance evidence and
	// reviews: every admin holds it, and the auditor role.
	PermAudit Permission = "audit"
)

// matrix is spec section 5 item 7, plus the multi-site roles:
//   - site-admin holds every permission of admin but is always site-bound,
//     so it manages users, tokens, agents and devices of its own site only;
//   - global-admin holds every permission of admin and, alone in
//     multi-site mode, global-admin (AI provider management).
//
// In single-site mode there is no global-admin role, and admin holds
// global-admin so that providers can be managed at all.
var matrix = map[Role][]Permission{
	RoleAdmin:       {PermView, PermOperate, PermAnalyze, PermDevices, PermManageAgents, PermAdmin, PermAudit},
	RoleNetOps:      {PermView, PermOperate, PermAnalyze, PermDevices},
	RoleAnalyst:     {PermView, PermAnalyze},
	RoleViewer:      {PermView},
	RoleSiteAdmin:   {PermView, PermOperate, PermAnalyze, PermDevices, PermManageAgents, PermAdmin, PermAudit},
	RoleGlobalAdmin: {PermView, PermOperate, PermAnalyze, PermDevices, PermManageAgents, PermAdmin, PermGlobalAdmin, PermAudit},
	RoleAuditor:     {PermView, PermAudit},
}

// Allows reports whether role holds permission p.
func Allows(role Role, p Permission, multiSite bool) bool {
	if !ValidRole(role, multiSite) {
		return false
	}
	if role == RoleAdmin && p == PermGlobalAdmin {
		return !multiSite
	}
	return slices.Contains(matrix[role], p)
}

// Permissions lists every permission, in the order a console shows them.
func Permissions() []Permission {
	return []Permission{PermView, PermOperate, PermAnalyze, PermDevices, PermManageAgents, PermAdmin, PermAudit, PermGlobalAdmin}
}

// PermissionsOf lists the permissions role holds in this mode (those
// Allows grants), in the order of Permissions; none for a role that is not
// valid in this mode. /api/auth/status serves the caller's, so a console
// shows what the role may use without a copy of the matrix.
func PermissionsOf(role Role, multiSite bool) []Permission {
	out := []Permission{}
	for _, p := range Permissions() {
		if Allows(role, p, multiSite) {
			out = append(out, p)
		}
	}
	return out
}

// ReadOnly reports whether role changes nothing anywhere (the auditor).
// The matrix alone does not say it: the spec opens a few changing routes
// to any signed-in identity (PATCH /api/v1/agents/{id}), and a read-only
// role must be refused there too; app/api asks this for such routes.
func ReadOnly(role Role) bool { return role == RoleAuditor }

// ValidRole reports whether role may be assigned in this mode.
func ValidRole(role Role, multiSite bool) bool {
	switch role {
	case RoleAdmin, RoleNetOps, RoleAnalyst, RoleViewer, RoleAuditor:
		return true
	case RoleSiteAdmin, RoleGlobalAdmin:
		return multiSite
	}
	return false
}

// Roles lists the roles valid in this mode, most privileged first.
func Roles(multiSite bool) []Role {
	if multiSite {
		return []Role{RoleGlobalAdmin, RoleAdmin, RoleSiteAdmin, RoleNetOps, RoleAuditor, RoleAnalyst, RoleViewer}
	}
	return []Role{RoleAdmin, RoleNetOps, RoleAuditor, RoleAnalyst, RoleViewer}
}

// rank orders roles by privilege, for "may X grant role Y" checks.
func rank(r Role) int {
	switch r {
	case RoleGlobalAdmin:
		return 6
	case RoleAdmin:
		return 5
	case RoleSiteAdmin:
		return 4
	case RoleNetOps:
		return 3
	case RoleAnalyst, RoleAuditor:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}
