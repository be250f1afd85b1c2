package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netmon/store/storetest"
)

func runIn(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestAdminCommands(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		if code, _, errOut := runIn("short\n", "admin", "user", "create", "--create", "--db", dsn, "--username", "x", "--role", "viewer"); code == 0 || !strings.Contains(errOut, "password must be at least 8 characters") {
			t.Fatalf("short password: %d %s", code, errOut)
		}
		code, out, errOut := runIn("first-admin-pw\n", "admin", "user", "create", "-db", dsn, "-username", "Root", "-role", "admin")
		if code != 0 || out != "created user root (id 1, role admin)\n" {
			t.Fatalf("create: %d %q %s", code, out, errOut)
		}
		if code, _, errOut := runIn("other-pass-1\n", "admin", "user", "create", "--db", dsn, "--username", "root"); code == 0 || !strings.Contains(errOut, `username "root" is taken`) {
			t.Fatalf("duplicate: %d %s", code, errOut)
		}
		code, out, _ = runIn("", "admin", "user", "list", "--db", dsn, "--output", "json")
		var users []struct {
			Username, Role string
			Enabled        bool
		}
		if code != 0 || json.Unmarshal([]byte(out), &users) != nil || len(users) != 1 || users[0].Username != "root" || !users[0].Enabled {
			t.Fatalf("list: %d %s", code, out)
		}
		code, out, _ = runIn("", "admin", "user", "list", "--db", dsn)
		if code != 0 || !strings.HasPrefix(out, "ID  USERNAME  ROLE   SITE  ENABLED  SSO\n1   root      admin        true     false\n") {
			t.Fatalf("table: %q", out)
		}
		code, out, _ = runIn("", "admin", "token", "create", "--db", dsn, "--name", "ci", "--role", "netops")
		if code != 0 || !strings.HasPrefix(out, "bnt_") || len(strings.TrimSpace(out)) != 68 {
			t.Fatalf("token: %d %q", code, out)
		}
		if code, _, errOut := runIn("new-root-pass\n", "admin", "user", "passwd", "--db", dsn, "ROOT"); code != 0 {
			t.Fatalf("passwd: %s", errOut)
		}
		if code, _, errOut := runIn("", "admin", "user", "list", "--db", dsn, "-o", "yaml"); code != 2 || !strings.Contains(errOut, `--output "yaml"`) {
			t.Fatalf("bad output: %d %s", code, errOut)
		}
		if code, _, errOut := runIn("x-pass-1234\n", "admin", "user", "passwd", "--db", dsn, "nobody"); code == 0 || !strings.Contains(errOut, `no user "nobody"`) {
			t.Fatalf("passwd of nobody: %d %s", code, errOut)
		}
	})
}

func TestAdminRefusesMissingDirectory(t *testing.T) {
	code, _, errOut := runIn("", "admin", "user", "list", "--db", filepath.Join(t.TempDir(), "no", "netmon.db"))
	if code == 0 || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("%d %s", code, errOut)
	}
}

// TestAdminRefusesToCreateByTypo: a --db that does not exist is an error
// naming the file (exit 2), and no database appears; --create makes it,
// and the file used is named on stderr.
func TestAdminRefusesToCreateByTypo(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "netmn.db")
	code, _, errOut := runIn("", "admin", "user", "list", "--db", typo)
	if code != 2 || !strings.Contains(errOut, "database "+typo+" does not exist") || !strings.Contains(errOut, "--create") {
		t.Fatalf("typo: %d %s", code, errOut)
	}
	if _, err := os.Stat(typo); !os.IsNotExist(err) {
		t.Fatalf("the mistyped database was created: %v", err)
	}
	code, _, errOut = runIn("", "admin", "user", "list", "--db", typo, "--create")
	if code != 0 || !strings.Contains(errOut, "database: "+typo) {
		t.Fatalf("--create: %d %s", code, errOut)
	}
}

func TestAdminEnrollTokens(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		code, out, errOut := runIn("", "admin", "enroll-token", "create", "-create", "-db", dsn, "-name", "rollout", "-max-uses", "0", "-expires-in-days", "-1", "-allowed-cidrs", "10.0.0.0/8,192.0.2.9")
		if code != 0 || !strings.HasPrefix(out, "ent_") || len(strings.TrimSpace(out)) != 68 || !strings.Contains(errOut, "expires never, max uses 0") {
			t.Fatalf("create: %d %q %s", code, out, errOut)
		}
		if code, _, errOut := runIn("", "admin", "enroll-token", "create", "-db", dsn, "-name", "bad", "-allowed-cidrs", "not-a-net"); code == 0 || !strings.Contains(errOut, `"not-a-net" is not a prefix`) {
			t.Fatalf("bad cidr: %d %s", code, errOut)
		}
		code, out, _ = runIn("", "admin", "enroll-token", "list", "-db", dsn)
		if code != 0 || !strings.Contains(out, "rollout") || !strings.Contains(out, "active") || !strings.Contains(out, "0/∞") || !strings.Contains(out, "10.0.0.0/8,192.0.2.9/32") || strings.Contains(out, "ent_") {
			t.Fatalf("list: %d %q", code, out)
		}
	})
}
