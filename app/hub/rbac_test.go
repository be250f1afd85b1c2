package hub

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/agentmode/wire"
	"netmon/app/api/router"
)

var updateMatrix = flag.Bool("update-matrix", false, "rewrite testdata/rbac/matrix.txt from the running hub")

// matrixIdentities are the columns of RELIABILITY case 18: no
// credentials, a session of each role, API tokens (valid, site-bound,
// revoked), an enrolled agent's token, a token no agent holds, and an
// enroll token.
var matrixIdentities = []string{"anonymous", "viewer", "analyst", "netops", "auditor", "admin", "site_token", "revoked_token", "agent", "agent_token", "enroll_token"}

// TestRBACMatrix calls every route of the route table (hence of the
// OpenAPI document) as each kind of caller and compares who gets 401, who
// 403 and who through with the checked-in table testdata/rbac/matrix.txt.
// A new route fails this test until its row is reviewed and added
// (go test ./app/hub -run TestRBACMatrix -update-matrix). A server error
// is never a cell's "ok": it is written as its status and, but for the
// documented 503, fails the test, so -update-matrix cannot bless it.
func TestRBACMatrix(t *testing.T) {
	h, boot := bootstrap(t, storetestSQLite(t))
	clients := map[string]*client{"anonymous": h.client(t)}
	for _, role := range []string{"viewer", "analyst", "netops", "auditor"} {
		boot.createUser(role, role+"-pass-1", role, "")
	}
	boot.createUser("admin1", "admin-pass-1", "admin", "") // ends the bootstrap session
	admin := h.client(t)
	admin.login("admin1", "admin-pass-1")
	for _, role := range []string{"viewer", "analyst", "netops", "auditor"} {
		c := h.client(t)
		c.login(role, role+"-pass-1")
		clients[role] = c
	}
	clients["admin"] = admin
	token := func(name, role, site string) (string, int64) {
		var out struct {
			Token string `json:"token"`
			ID    int64  `json:"id"`
		}
		admin.call("POST", "/api/v1/tokens", map[string]string{"name": name, "role": role, "site": site}).must(t, 200).decode(t, &out)
		return out.Token, out.ID
	}
	siteTok, _ := token("site", "admin", "a")
	revTok, revID := token("revoked", "admin", "")
	admin.call("DELETE", fmt.Sprintf("/api/v1/tokens/%d", revID), nil).must(t, 200)
	// An enrolled agent, and the enroll token it used (unlimited uses:
	// the matrix enrolls again through the hello row).
	var enroll struct {
		Token string `json:"token"`
	}
	admin.call("POST", "/api/v1/enroll-tokens", map[string]any{"name": "matrix", "max_uses": 0}).must(t, 200).decode(t, &enroll)
	enroller := h.client(t)
	enroller.headers[wire.HeaderEnrollToken] = enroll.Token
	var hello wire.HelloResponse
	enroller.call("POST", wire.PathHello, wire.Hello{Name: "matrix", ProtocolVersion: 1}).must(t, 200).decode(t, &hello)
	clients["enroll_token"] = enroller
	for name, bearer := range map[string]string{"site_token": siteTok, "revoked_token": revTok, "agent": hello.AgentToken, "agent_token": "agt_" + strings.Repeat("7", 64)} {
		c := h.client(t)
		c.bearer = bearer
		clients[name] = c
	}

	routes := append([]router.Route(nil), h.api.Routes()...)
	// Logout ends the caller's session: call it last.
	sort.SliceStable(routes, func(i, j int) bool { return routes[j].Path == "/api/logout" && routes[i].Path != "/api/logout" })
	// A route whose permission depends on a query value (PermWhen) gets
	// a second row for that value.
	var rows []router.Route
	for _, r := range routes {
		rows = append(rows, r)
		if w := r.PermWhen; w != nil {
			v := r
			v.Path += "?" + w.Param + "=" + w.Value
			v.Perm, v.PermWhen = w.Perm, nil
			rows = append(rows, v)
		}
	}
	var lines []string
	for _, r := range rows {
		path := strings.NewReplacer("{id}", "999999").Replace(r.Path)
		var cells []string
		for _, who := range matrixIdentities {
			var body any
			if r.Method == "POST" || r.Method == "PUT" || r.Method == "PATCH" {
				body = "{}"
			}
			resp := clients[who].call(r.Method, path, body)
			outcome := "ok"
			switch {
			case resp.code == 401 || resp.code == 403 || resp.code == 429:
				outcome = fmt.Sprint(resp.code)
			case resp.code >= 500:
				// A server error is never an "allowed" cell: it is
				// written as its status, and fails unless it is 503 (a
				// documented answer: a feature or the queue unavailable).
				outcome = fmt.Sprint(resp.code)
				if resp.code != 503 {
					t.Errorf("%s %s as %s: %d %s", r.Method, path, who, resp.code, resp.body)
				}
			}
			cells = append(cells, who+"="+outcome)
		}
		// A Global row (refused to site-bound identities whatever their
		// role) says so beside its permission.
		perm := string(r.Perm)
		if r.Global {
			perm += ",global"
		}
		lines = append(lines, fmt.Sprintf("%-6s %-28s %-12s | %s", r.Method, r.Path, perm, strings.Join(cells, " ")))
	}
	sort.Strings(lines)
	got := strings.Join(lines, "\n") + "\n"
	file := filepath.Join("..", "..", "testdata", "rbac", "matrix.txt")
	if *updateMatrix {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (review and write it with -update-matrix)", err)
	}
	if diff := cmp.Diff(got, string(want)); diff != "" {
		t.Errorf("access matrix changed; review, then run with -update-matrix (-got, +want):\n%s", diff)
	}
}
