package hub

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netmon/app/auth"
)

var updateRoles = flag.Bool("update-roles", false, "rewrite ui/docs/91-roles-and-routes.md from testdata/rbac/matrix.txt and app/auth's matrix")

// TestRolesReference: the manual's page of roles and routes is made from
// app/auth's role matrix and from testdata/rbac/matrix.txt, which
// TestRBACMatrix keeps equal to what a running hub answers each identity
// on every route of the route table. A route or permission change that
// does not regenerate the page fails here:
//
//	go test ./app/hub -run TestRolesReference -update-roles
func TestRolesReference(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "rbac", "matrix.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(`# Roles and routes

<!-- Generated from app/auth's role matrix and testdata/rbac/matrix.txt (what
a running hub answers each identity on every route) by
go test ./app/hub -run TestRolesReference -update-roles. Do not edit by hand. -->

How users and tokens get their rights is in the [security model](11-security.md).
A role holds permissions; a route needs one permission, or only a
signed-in identity (` + "`S`" + `), or nothing (` + "`P`" + `); ` + "`AG`" + ` routes are for agents and
` + "`EN`" + ` for an enroll token. ` + "`global`" + ` marks a route that covers every site: a
site-bound identity is refused there whatever its role.

## Permissions of each role

| role | modes | permissions |
|---|---|---|
`)
	perms := []auth.Permission{auth.PermView, auth.PermOperate, auth.PermAnalyze, auth.PermDevices, auth.PermManageAgents, auth.PermAdmin, auth.PermAudit, auth.PermGlobalAdmin}
	for _, r := range auth.Roles(true) {
		modes := "multi-site"
		if auth.ValidRole(r, false) {
			modes = "single- and multi-site"
		}
		var single, multi []string
		for _, p := range perms {
			if auth.Allows(r, p, false) {
				single = append(single, "`"+string(p)+"`")
			}
			if auth.Allows(r, p, true) {
				multi = append(multi, "`"+string(p)+"`")
			}
		}
		held := strings.Join(multi, ", ")
		if auth.ValidRole(r, false) && strings.Join(single, ", ") != held {
			held = strings.Join(single, ", ") + " (multi-site: " + held + ")"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r, modes, held)
	}
	b.WriteString(`
## What each identity gets on each route

` + "`ok`" + ` is served; otherwise the status. ` + "`site_token`" + ` is an admin's API token
bound to one site; ` + "`agent`" + ` an agent's certificate or token on a user route.

| method | path | needs | anonymous | viewer | analyst | netops | auditor | admin | site token |
|---|---|---|---|---|---|---|---|---|---|
`)
	cols := []string{"anonymous", "viewer", "analyst", "netops", "auditor", "admin", "site_token"}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		left, right, ok := strings.Cut(line, "|")
		f := strings.Fields(left)
		if !ok || len(f) != 3 {
			t.Fatalf("matrix.txt: unexpected line %q", line)
		}
		got := map[string]string{}
		for _, kv := range strings.Fields(right) {
			k, v, _ := strings.Cut(kv, "=")
			got[k] = v
		}
		fmt.Fprintf(&b, "| %s | `%s` | `%s` |", f[0], f[1], f[2])
		for _, c := range cols {
			fmt.Fprintf(&b, " %s |", got[c])
		}
		b.WriteString("\n")
		n++
	}
	if n < 100 {
		t.Fatalf("matrix.txt has %d routes", n)
	}
	page := filepath.Join("..", "..", "ui", "docs", "91-roles-and-routes.md")
	if *updateRoles {
		if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(page)
	if err != nil || !bytes.Equal(want, b.Bytes()) {
		t.Fatalf("%s is not what the role matrix and matrix.txt say (%v): regenerate with go test ./app/hub -run TestRolesReference -update-roles", page, err)
	}
}
