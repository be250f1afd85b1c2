package auth

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPermissionsOf(t *testing.T) {
	all := []Permission{PermView, PermOperate, PermAnalyze, PermDevices, PermManageAgents, PermAdmin, PermAudit}
	for _, tt := range []struct {
		desc      string
		role      Role
		multiSite bool
		want      []Permission
	}{
		{"single-site admin also manages providers (global-admin)", RoleAdmin, false, append(append([]Permission{}, all...), PermGlobalAdmin)},
		{"multi-site admin does not", RoleAdmin, true, all},
		{"netops", RoleNetOps, false, []Permission{PermView, PermOperate, PermAnalyze, PermDevices}},
		{"auditor reads the audit log", RoleAuditor, false, []Permission{PermView, PermAudit}},
		{"analyst", RoleAnalyst, true, []Permission{PermView, PermAnalyze}},
		{"viewer", RoleViewer, false, []Permission{PermView}},
		{"site-admin in multi-site mode", RoleSiteAdmin, true, all},
		{"global-admin in multi-site mode", RoleGlobalAdmin, true, append(append([]Permission{}, all...), PermGlobalAdmin)},
		{"global-admin is no role in single-site mode", RoleGlobalAdmin, false, []Permission{}},
		{"an unknown role holds nothing", Role("root"), false, []Permission{}},
	} {
		if diff := cmp.Diff(PermissionsOf(tt.role, tt.multiSite), tt.want); diff != "" {
			t.Errorf("%s: PermissionsOf(%s, %v) (-got, +want):\n%s", tt.desc, tt.role, tt.multiSite, diff)
		}
	}
}

func TestPermissionsListsTheMatrix(t *testing.T) {
	// Every permission a role holds is listed, so PermissionsOf misses none.
	listed := map[Permission]bool{}
	for _, p := range Permissions() {
		if listed[p] {
			t.Errorf("%s listed twice", p)
		}
		listed[p] = true
	}
	for role, perms := range matrix {
		for _, p := range perms {
			if !listed[p] {
				t.Errorf("%s holds %s, which Permissions does not list", role, p)
			}
		}
	}
}
