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
// import. It holds the architecture, not today's exceptions: a new wrong
// arrow fails this test, and a new package needs a row — the wave-2
// packages (alerting, SNMP, the firewall driver, topology, compliance)
// have theirs already, so they land inside it.
var importRules = []struct {
	pkg   string
	allow []string
}{
	// 1. Leaves import nothing of ours.
	{"store/record", nil},
	{"store/vault", nil},
	{"store/migrations", nil},
	{"capture/decode", nil},
	{"agentmode/wire", nil},
	{"ui", []string{"ui/docs"}},
	// The manual: embedded markdown, rendered; a leaf.
	{"ui/docs", nil},
	{"app/errs", nil},   // the error kinds services return
	{"app/secret", nil}, // bearer tokens: generation, hashing, comparison
	{"app/logging", nil},
	{"app/version", nil},
	{"app/httpguard", nil},
	{"app/netguard", nil}, // the outbound dialer every outbound connection goes through
	{"app/panics", nil},   // a background item's panic recovered into its error and a count

	// 2. Producers import only leaves (and collectors/geo); their output
	// is store/record's: the Sink, and the alert engine's inputs they own
	// (the capture's traffic and names, the host's inventory, the threat
	// list's hits), so none imports alerting.
	{"capture/source", nil},
	{"capture/pcaprec", nil},
	{"capture/proc", []string{"store/record"}}, // the host's inventory, in the alert engine's input types
	{"capture/ebpf", nil},                      // the eBPF backend's kernel programs and map reader
	// The agent's attribution backends report in the wire's section types.
	{"capture/attr", []string{"agentmode/wire", "capture/decode", "capture/ebpf", "capture/source"}},
	{"capture", []string{"app/netguard", "app/panics", "capture/decode", "capture/pcaprec", "capture/source", "collectors/geo", "store/record"}},
	{"collectors/geo", []string{"app/netguard", "app/panics"}},
	{"collectors/geo/threat", []string{"app/panics", "store/record"}}, // the threat list and domain categories: lookups, like GeoIP
	{"collectors/udpsock", []string{"store/record"}},
	{"collectors/flows/netflow", []string{"store/record"}},
	{"collectors/flows/sflow", []string{"store/record"}},
	{"collectors/flows", []string{"app/panics", "collectors/flows/netflow", "collectors/flows/sflow", "collectors/udpsock", "store/record"}},
	{"collectors/flows/replay/cmd/flowreplay", []string{"collectors/flows/replay"}},
	{"collectors/flows/replay", nil},
	{"collectors/syslog", []string{"app/panics", "collectors/udpsock", "store/record"}},
	{"collectors/snmp", []string{"app/panics", "collectors/udpsock", "store/record"}}, // the device component's SNMP driver
	{"collectors/snmp/snmptest", nil},                                                 // starts a real snmpd for tests
	{"collectors/fwrest", []string{"app/netguard", "app/panics", "store/record"}},     // the device component's firewall REST driver
	{"collectors/fwrest/fwtest", nil},                                                 // the fixture device of its tests
	// The device component owns a resource (the registry) and polls
	// through its drivers: like a service it imports the store, audit
	// and errs; it implements the alert engine's inputs (alerting/rules'
	// types), and no other service.
	{"collectors/devices", []string{"alerting/rules", "app/audit", "app/errs", "app/netguard", "app/panics", "collectors/fwrest", "collectors/snmp", "store", "store/record"}},

	// 3. The store knows nothing of HTTP, collectors or alerting.
	{"store", []string{"app/panics", "store/flowagg", "store/migrations", "store/record"}},
	{"store/queue", []string{"app/panics", "store/flowagg", "store/record"}},
	{"store/flowagg", []string{"store/record"}}, // the flow minutes' in-memory sums, between queue and store
	{"store/storetest", []string{"store"}},

	// 4. alerting and the app services declare the small interfaces they
	// need (app/hub hands in the concrete types) and import only the
	// store and leaves; services do not import each other. A service's
	// own subpackages are the exception the rows below name.
	{"alerting", []string{"alerting/anomaly", "alerting/incident", "alerting/notify", "alerting/rules", "alerting/siem", "app/errs", "store", "store/record"}},
	{"alerting/anomaly", []string{"store/record"}},
	{"alerting/health", []string{"store", "store/record"}}, // the network health score, over typed counts
	{"alerting/incident", []string{"app/errs", "store/record"}},
	{"alerting/notify", []string{"alerting/siem", "app/errs", "app/netguard", "store", "store/record"}},
	{"alerting/rules", []string{"app/errs", "store/record"}},
	{"alerting/siem", []string{"app/netguard", "store/record"}},
	{"app/audit", []string{"store"}},
	{"app/auth", []string{"app/errs", "app/panics", "app/secret", "store"}},
	// OIDC maps groups to the roles of its parent, app/auth (which never
	// imports it).
	{"app/auth/oidc", []string{"app/auth", "app/errs", "app/netguard"}},
	{"app/history", []string{"store"}},
	{"app/procview", []string{"agentmode/wire", "app/errs", "store", "store/record"}},                           // the process detail of deep collection
	{"app/live", []string{"app/panics", "capture", "capture/pcaprec", "capture/proc", "store", "store/record"}}, // the tick reads the capture it broadcasts and the fleet summary from the database
	{"app/topology", []string{"app/errs", "app/panics", "store", "store/record"}},                               // wave 2
	{"app/compliance", []string{"app/errs", "app/panics", "store", "store/record"}},                             // wave 2
	// The AI provider layer (issue 32): a leaf over net/http, and its fakes.
	{"app/ai/provider", nil},
	{"app/ai/provider/providertest", nil},
	// The assistant's context: pseudonyms, quoting and assembly over
	// the provider's Message type; no store, no routes.
	{"app/ai/prompt", []string{"app/ai/provider"}},
	{"app/leader", []string{"app/panics"}},
	{"app/ai", []string{"app/ai/prompt", "app/ai/provider", "app/errs", "app/netguard", "app/panics", "store"}},
	{"app/ai/facts", []string{"app/ai", "app/ai/prompt", "app/errs", "store", "store/record"}},
	{"app/ai/triage", []string{"app/ai", "app/panics", "store", "store/record"}},
	// Reports: the model is a leaf the two renderers read; the service
	// builds it from the store and reads the types of the health score
	// and of app/compliance (the Annex A control list, the log's status),
	// whose services the hub hands in.
	{"app/reports/model", nil},
	{"app/reports/render", []string{"app/reports/model"}},
	{"app/reports", []string{"alerting/health", "app/compliance", "app/errs", "app/panics", "app/reports/model", "app/reports/render", "store", "store/record"}},
	// The fleet's root composes its three jobs; enroll and agents read
	// the intake's types (the agent token, the stored rates).
	{"app/fleet/pki", []string{"agentmode/wire"}},
	{"app/fleet/intake", []string{"agentmode/wire", "app/errs", "app/secret", "store", "store/record"}},
	{"app/fleet/enroll", []string{"agentmode/wire", "app/errs", "app/fleet/intake", "app/secret", "store"}},
	{"app/fleet/agents", []string{"agentmode/wire", "app/errs", "app/panics", "app/fleet/intake", "store"}},
	// The fleet feeds the alert engine over its own reads (inventories,
	// interface rates, traffic series) in the rules' and anomaly's types.
	{"app/fleet", []string{"agentmode/wire", "alerting/anomaly", "alerting/rules", "app/fleet/agents", "app/panics", "app/fleet/enroll", "app/fleet/intake", "app/fleet/pki", "store", "store/record"}},

	// The agent: its own subpackages, the protocol, the host's sockets,
	// and the build version; nothing of the hub.
	{"agentmode", []string{"agentmode/wire", "agentmode/spool", "agentmode/service", "agentmode/collect", "agentmode/state", "app/version", "capture/attr", "capture/proc"}},

	// 5. Only app/hub and app/api fan in; main.go imports only app/cli,
	// whose commands are built over the services they run.
	{"app/api", []string{"agentmode/wire", "app/ai", "app/ai/prompt", "alerting", "alerting/anomaly", "alerting/health", "alerting/incident", "alerting/notify", "app/api/router", "app/audit", "app/auth", "app/auth/oidc", "app/compliance", "app/errs", "app/fleet", "app/fleet/agents", "app/fleet/enroll", "app/fleet/intake", "app/history", "app/httpguard", "app/logging", "app/procview", "app/reports", "app/reports/model", "app/secret", "app/topology", "app/version", "capture", "capture/pcaprec", "capture/proc", "capture/source", "collectors/devices", "collectors/flows", "collectors/fwrest", "collectors/geo", "collectors/geo/threat", "collectors/snmp", "store", "store/flowagg", "store/record", "ui"}},
	// The route machinery: the table's row type, adapters, binding, OpenAPI.
	{"app/api/router", []string{"app/errs"}},
	{"app/hub", []string{"store/queue/natsq", "app/leader", "app/ai", "app/ai/facts", "app/ai/triage", "alerting", "alerting/anomaly", "alerting/health", "alerting/incident", "alerting/notify", "alerting/rules", "app/api", "app/audit", "app/auth", "app/auth/oidc", "app/compliance", "app/config", "app/fleet", "app/fleet/enroll", "app/fleet/pki", "app/httpguard", "app/live", "app/netguard", "app/panics", "app/reports", "app/reports/render", "app/topology", "app/version",
		"capture", "capture/pcaprec", "capture/proc", "collectors/devices", "collectors/flows", "collectors/flows/netflow", "collectors/geo", "collectors/geo/threat", "collectors/syslog", "store", "store/queue", "store/record", "store/vault", "ui"}},
	// The configuration composes the components' own Config structs.
	{"app/config", []string{"store/queue/natsq", "app/ai", "agentmode", "alerting", "alerting/incident", "alerting/notify", "agentmode/collect", "app/api", "app/auth", "app/auth/oidc", "app/compliance", "app/fleet", "app/fleet/pki", "app/httpguard", "app/live", "app/logging", "app/netguard", "app/reports", "app/topology", "capture", "capture/pcaprec", "collectors/devices", "collectors/flows", "collectors/geo", "collectors/geo/threat", "collectors/syslog", "store", "store/queue", "store/vault", "ui"}},
	{"app/cli", []string{"agentmode", "app/audit", "app/auth", "app/compliance", "app/config", "app/fleet/enroll", "app/hub", "app/logging", "app/version", "store", "store/vault", "ui/docs"}},
	{"", []string{"app/cli"}}, // main.go
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

// apiImporters are the only packages that may import app/api: the
// composition root and the CLI. app/config is there for api.Config only
// until the API's Config moves (issue 29); no service may call into the
// API for a domain function.
var apiImporters = []string{"app/hub", "app/cli", "app/config"}

// TestOnlyRootImportsAPI: no row but apiImporters' allows app/api.
func TestOnlyRootImportsAPI(t *testing.T) {
	for _, r := range importRules {
		if contains(r.allow, "app/api") && !contains(apiImporters, r.pkg) {
			t.Errorf("%q may import app/api: only %v may", r.pkg, apiImporters)
		}
	}
}

// TestImportRulesAreClosed: every package a row allows has a row itself,
// so the table cannot allow an arrow into a package it does not place.
func TestImportRulesAreClosed(t *testing.T) {
	for _, r := range importRules {
		for _, a := range r.allow {
			if _, ok := allowedFor(a); !ok || a == "" {
				t.Errorf("%q may import %q, which has no row", r.pkg, a)
			}
		}
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

// TestTopLevelEntries: the repository's top level holds only what the user
// fixed. It looks at tracked files: what running the quick start leaves in
// a clone (the database, a vault key, an agent's state in an old layout)
// is not part of the project and must not fail make test.
func TestTopLevelEntries(t *testing.T) {
	allowed := map[string]bool{"main.go": true, "app": true, "store": true, "capture": true, "collectors": true,
		"alerting": true, "agentmode": true, "ui": true, "testdata": true, "go.mod": true, "go.sum": true,
		"Makefile": true, "README.md": true, "LICENSE": true}
	git, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is needed")
		}
		t.Skip("git not installed")
	}
	// Tracked files plus untracked ones git does not ignore: a new file
	// about to be committed counts, build output and run state do not.
	cmd := exec.Command(git, "ls-files", "--cached", "--others", "--exclude-standard")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs on a git clone: %v", err)
		}
		t.Skipf("not a git checkout: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		top, _, _ := strings.Cut(f, "/")
		if top == "" || strings.HasPrefix(top, ".") || seen[top] {
			continue
		}
		seen[top] = true
		if !allowed[top] {
			t.Errorf("top-level entry %q is not one the user fixed", top)
		}
	}
	if !seen["main.go"] || !seen["app"] {
		t.Errorf("git listed no main.go or app/: %v", seen)
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
	// Nor left in the tree, ignored or not, by a test that wrote one
	// outside t.TempDir(). The top-level vault.key is make run's.
	cmd = exec.Command(git, "ls-files", "--others", "--", "*.key")
	cmd.Dir = filepath.Join("..", "..")
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files --others: %v", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if f != "vault.key" {
			t.Errorf("key file %s is in the tree: tests write keys under t.TempDir()", f)
		}
	}
}
