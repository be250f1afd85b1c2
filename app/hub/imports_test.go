package hub

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// importRules holds STYLE.md's "which way imports run": for each package
// (by directory prefix, longest match wins) the netmon packages it may
// import. A new wrong arrow fails this test; a new package needs a row.
var importRules = []struct {
	pkg   string
	allow []string
}{
	{"", []string{"app/cli"}}, // main.go
	{"app/cli", []string{"agentmode", "app/audit", "app/auth", "app/config", "app/fleet", "app/hub", "app/logging", "app/version", "store", "store/vault"}},
	{"agentmode/wire", nil},
	// The agent: its own subpackages, the protocol, the host's sockets, and
	// the build version; nothing of the hub.
	{"agentmode", []string{"agentmode/wire", "agentmode/spool", "agentmode/service", "agentmode/collect", "agentmode/state", "app/version", "capture/proc"}},
	{"app/fleet/pki", []string{"agentmode/wire"}},
	{"app/fleet", []string{"agentmode/wire", "app/audit", "app/fleet/pki", "store", "store/record"}},
	// The configuration composes the components' own Config structs.
	{"app/config", []string{"agentmode", "agentmode/collect", "app/auth", "app/auth/oidc", "app/fleet", "app/fleet/pki", "app/httpguard", "app/live", "app/logging", "capture", "capture/record", "collectors/flows", "collectors/geo", "collectors/syslog", "store", "store/queue", "store/vault", "ui"}},
	{"app/logging", nil},
	{"app/version", nil},
	{"app/errs", nil},
	{"app/hub", []string{"app/api", "app/auth", "app/auth/oidc", "app/config", "app/fleet", "app/fleet/pki", "app/httpguard", "app/live", "app/version", "capture", "capture/proc", "capture/record", "collectors/flows", "collectors/flows/netflow", "collectors/geo", "collectors/syslog", "store", "store/queue", "store/vault", "ui"}},
	{"app/live", []string{"capture", "capture/proc", "capture/record"}},
	{"app/httpguard", nil},
	{"app/history", []string{"store"}},
	{"capture/decode", nil},
	{"capture/source", nil},
	{"capture/record", nil},
	{"capture/proc", nil},
	{"capture", []string{"capture/decode", "capture/record", "capture/source", "collectors/geo"}},
	{"collectors/geo", nil},
	{"collectors/flows/netflow", []string{"store/record"}},
	{"collectors/flows/sflow", []string{"store/record"}},
	{"collectors/flows", []string{"collectors/flows/netflow", "collectors/flows/sflow", "collectors/udpsock", "store/record"}},
	{"collectors/syslog", []string{"collectors/udpsock", "store/record"}},
	{"collectors/udpsock", nil},
	{"collectors/flows/replay/cmd/flowreplay", []string{"collectors/flows/replay"}},
	{"collectors/flows/replay", nil},
	{"store/record", nil},
	{"store/queue", []string{"store/flowagg", "store/record"}},
	{"store/flowagg", []string{"store/record"}},
	{"app/api/router", []string{"app/errs"}},
	{"app/api", []string{"agentmode/wire", "app/api/router", "app/errs", "app/fleet", "app/audit", "app/auth", "app/auth/oidc", "app/history", "app/httpguard", "app/logging", "app/version", "capture", "capture/proc", "capture/record", "collectors/geo", "store", "ui"}},
	{"app/auth/oidc", []string{"app/errs"}},
	{"app/auth", []string{"app/audit", "app/errs", "store"}},
	{"app/audit", []string{"store"}},
	{"store/vault", nil},
	{"store/migrations", nil},
	{"store/storetest", []string{"store"}},
	{"store", []string{"store/flowagg", "store/migrations", "store/record"}},
	{"ui", nil},
}

func TestImportDirection(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		// Tests may use helpers across the layers (store/storetest); the
		// rules hold the graph the binary is built from.
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		allow, ok := allowedFor(rel)
		if !ok {
			bad = append(bad, rel+": no import rule for this package; add one to importRules")
			return nil
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if p != "netmon" && !strings.HasPrefix(p, "netmon/") {
				continue
			}
			target := strings.TrimPrefix(strings.TrimPrefix(p, "netmon"), "/")
			if target == rel {
				continue
			}
			if !contains(allow, target) {
				bad = append(bad, filepath.ToSlash(strings.TrimPrefix(path, root+"/"))+" imports "+p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bad)
	for _, b := range dedupe(bad) {
		t.Error(b)
	}
}

func allowedFor(pkg string) ([]string, bool) {
	best, found := -1, false
	var allow []string
	for _, r := range importRules {
		if pkg == r.pkg || (r.pkg != "" && strings.HasPrefix(pkg, r.pkg+"/")) {
			if len(r.pkg) > best {
				best, allow, found = len(r.pkg), r.allow, true
			}
		}
	}
	return allow, found
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func TestTopLevelEntries(t *testing.T) {
	allowed := map[string]bool{"main.go": true, "app": true, "store": true, "capture": true, "collectors": true,
		"alerting": true, "agentmode": true, "ui": true, "testdata": true, "go.mod": true, "go.sum": true,
		"Makefile": true, "README.md": true, "LICENSE": true,
		// Runtime artifacts of `make run` / `make build`, ignored by git.
		"bin": true, "netmon.db": true, "netmon.db-wal": true, "netmon.db-shm": true, "vault.key": true,
		"captures": true, "geoip": true, "tls": true}
	entries, err := os.ReadDir(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && !allowed[e.Name()] {
			t.Errorf("top-level entry %q is not one the user fixed", e.Name())
		}
	}
}

// TestNoKeyTracked: no key file is committed (a test once left a generated
// vault key in app/hub and it was committed). Tests write keys only under
// t.TempDir().
func TestNoKeyTracked(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is needed")
		}
		t.Skip("git not installed")
	}
	cmd := exec.Command(git, "ls-files", "--", "*.key", "*.pem", "**/vault.key")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	if files := strings.TrimSpace(string(out)); files != "" {
		t.Errorf("key files are tracked:\n%s", files)
	}
}
