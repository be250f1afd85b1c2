package hub

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readmeCommands are the command lines the README shows (in ```sh blocks
// and in code spans starting with make, ./bin/netmon, sudo or softflowd),
// with the comment after # dropped.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]bool{}
	add := func(c string) {
		c = strings.TrimSpace(c)
		if i := strings.Index(c, "  #"); i >= 0 {
			c = strings.TrimSpace(c[:i])
		}
		if c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	inSh, inBlock := false, false
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	span := regexp.MustCompile("`((?:make|\\./bin/netmon|sudo|softflowd) [^`]*|make|\\./bin/netmon)`")
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if !inBlock {
				inBlock, inSh = true, trimmed == "```sh"
			} else {
				inBlock, inSh = false, false
			}
			continue
		}
		if inBlock {
			if inSh {
				add(trimmed)
			}
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			add(m[1])
		}
	}
	return out
}

// TestReadmeLinks: every file the README links to or shows exists.
func TestReadmeLinks(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\(([^)#\s]+)[^)]*\)`).FindAllStringSubmatch(string(b), -1)
	if len(links) < 3 {
		t.Fatalf("the README links to %d files", len(links))
	}
	for _, m := range links {
		if strings.Contains(m[1], "://") {
			continue
		}
		if _, err := os.Stat(filepath.Join("../..", m[1])); err != nil {
			t.Errorf("the README links to %s: %v", m[1], err)
		}
	}
}

// TestReadmeCommands runs every command the README shows, on a hub binary
// started the way `make run` starts it, in a fresh directory, in the
// README's order of events: the banner, the manual and help commands,
// softflowd exporting a namespace's traffic, an agent enrolled with the
// banner's token, then the first admin user turning authentication on.
// A command the README gains that this test does not know fails it, so
// the README cannot show a command nobody ran. Substitutions: fresh ports
// for 8080, 2055 and 5514; a veth pair of the test's own namespace for
// eth0; the banner's token for <enroll token>; `sudo` dropped (the test
// runs as root). `make run` and `make test` are checked against the
// Makefile's recipes (make test is what runs this test).
func TestReadmeCommands(t *testing.T) {
	needRoot(t)
	// make test runs make deps first, which installs softflowd: a missing
	// one is a broken machine, never a reason to skip the README's story.
	if _, err := exec.LookPath("softflowd"); err != nil {
		t.Fatal("softflowd is not installed (make deps installs it)")
	}
	cmds := readmeCommands(t)
	bin := netmonBinary(t)
	dir := t.TempDir()
	port, flowPort, syslogPort := freePort(t), freeUDPPort(t), freeUDPPort(t)
	base := fmt.Sprintf("http://localhost:%d", port)
	vethHost := alertVeth(t, "10.231.7.1", "10.231.7.2")
	sub := strings.NewReplacer("8080", strconv.Itoa(port), "2055", strconv.Itoa(flowPort), "5514", strconv.Itoa(syslogPort),
		"./bin/netmon", bin, "eth0", vethHost, "sudo ", "")
	env := []string{"NETMON_IP_ONLINE_LOOKUP=false", "NETMON_STATE=" + filepath.Join(dir, "agent", "netmon-agent.state.json")}
	run := func(stdin string, args ...string) (string, error) {
		c := exec.Command(args[0], args[1:]...)
		c.Dir, c.Env, c.Stdin = dir, append(os.Environ(), env...), strings.NewReader(stdin)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	recipe := func(target string) string {
		m := regexp.MustCompile(`(?m)^` + target + `:.*\n((?:\t.*\n)+)`).FindSubmatch(makefile)
		if m == nil {
			t.Fatalf("Makefile has no %s target", target)
		}
		return string(m[1])
	}

	// One hub serves the whole story, started with the longest `make run
	// ARGS=...` the README shows (the one with the flow port).
	hubArgs := ""
	for _, c := range cmds {
		if m := regexp.MustCompile(`^make run ARGS="(.*)"$`).FindStringSubmatch(c); m != nil && len(m[1]) > len(hubArgs) {
			hubArgs = m[1]
		}
	}
	var hub *process
	var token string
	startHub := func(string) {
		if hub != nil {
			return
		}
		args := hubArgs
		if !strings.Contains(recipe("run"), "./bin/netmon hub $(ARGS)") {
			t.Fatalf("make run no longer runs ./bin/netmon hub $(ARGS):\n%s", recipe("run"))
		}
		hub = startCmd(t, dir, env, bin, append([]string{"hub", "-port", strconv.Itoa(port)}, strings.Fields(sub.Replace(args))...)...)
		waitFor(t, 30*time.Second, "the start banner", func() bool { return strings.Contains(hub.logs.String(), "  API ") }, hub.logs.String)
		banner := hub.logs.String()
		for _, want := range []string{"netmon hub ", "is running\n", "  Console   " + base + "\n",
			"  Sign in   authentication is OFF: every request is served as admin; create an admin with\n",
			"            netmon admin user create --username admin --role admin --db " + filepath.Join(dir, "netmon.db") + "\n",
			"            (this static enroll token was made now and is shown only once; ent_ tokens: Admin → Enroll tokens)\n",
			"  API       " + base + "/api/docs   Metrics " + base + "/metrics   Stop with Ctrl-C\n"} {
			if !strings.Contains(banner, want) {
				t.Errorf("the banner lacks %q:\n%s", want, banner)
			}
		}
		m := regexp.MustCompile(`  Agents    netmon agent -hub-url ` + regexp.QuoteMeta(base) + ` -hub-token (\S+)\n`).FindStringSubmatch(banner)
		if m == nil {
			t.Fatalf("no agent command line in the banner:\n%s", banner)
		}
		token = m[1]
	}
	get := func(path, bearer string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		var buf strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&buf)
		return resp.StatusCode, []byte(buf.String())
	}

	// Each README command: what it must do. Order: the hub first.
	type step struct {
		re *regexp.Regexp
		do func(m []string)
	}
	ranAgent, ranAdmin := false, false
	steps := []step{
		{regexp.MustCompile(`^make run$`), func([]string) { startHub("") }},
		{regexp.MustCompile(`^make run ARGS="(.*)"$`), func(m []string) { startHub(m[1]) }},
		{regexp.MustCompile(`^make test$`), func([]string) {
			if !strings.Contains(recipe("test"), "gotestsum") || !strings.Contains(string(makefile), "\ntest: deps test-ui") {
				t.Errorf("make test is no longer deps, the console's tests and gotestsum:\n%s", recipe("test"))
			}
		}},
		{regexp.MustCompile(`^make (toolchain|deps)$`), func(m []string) {
			root, _ := filepath.Abs("../..")
			if out, err := run("", "make", "-C", root, m[1]); err != nil {
				t.Errorf("make %s: %v\n%s", m[1], err, out)
			}
		}},
		{regexp.MustCompile(`^make build$`), func([]string) {
			if !strings.Contains(recipe("build"), "go build") {
				t.Errorf("make build does not build the binary:\n%s", recipe("build"))
			}
		}},
		{regexp.MustCompile(`^\./bin/netmon (version|--help|docs|docs TOPIC|<command> --help|hub --help)$`), func(m []string) {
			args := strings.Fields(strings.NewReplacer("TOPIC", "agents", "<command>", "agent").Replace(m[1]))
			out, err := run("", append([]string{bin}, args...)...)
			want := map[string]string{"version": "protocol", "--help": "Available Commands:", "docs": "15-troubleshooting",
				"docs TOPIC": "# Agents and deep collection", "<command> --help": "-hub-url", "hub --help": "--flow-port"}[m[1]]
			if err != nil || !strings.Contains(out, want) {
				t.Errorf("netmon %s: %v, output lacks %q:\n%.400s", m[1], err, want, out)
			}
		}},
		{regexp.MustCompile(`^softflowd (.*)$`), func(m []string) {
			startHub("")
			// -d: stay in the foreground (the test stops it); -p, -c: no
			// files in /run. Otherwise the README's flags as written.
			args := append(strings.Fields(sub.Replace(m[1])), "-d", "-p", filepath.Join(dir, "sf.pid"), "-c", filepath.Join(dir, "sf.ctl"))
			sf := startCmd(t, dir, nil, "softflowd", args...)
			// A steady UDP stream from the namespace (1 000 datagrams/s,
			// one flow): softflowd's capture hands packets over a block at
			// a time, so an almost idle link shows later than a busy one.
			ping := startCmd(t, dir, nil, "ip", "netns", "exec", "nmalert-"+strings.TrimPrefix(vethHost, "nah"), "/usr/bin/python3", "-c",
				"import socket,time\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\nwhile True:\n s.sendto(b'x'*100,('10.231.7.1',9999)); time.sleep(0.001)\n")
			start := time.Now()
			waitFor(t, 45*time.Second, "the namespace's stream in /api/v1/flows", func() bool {
				_, body := get("/api/v1/flows?minutes=5", "")
				return strings.Contains(string(body), `"10.231.7.2"`)
			}, func() string {
				_, body := get("/api/v1/flows?minutes=5", "")
				_, ex := get("/api/v1/flows/exporters", "")
				return "softflowd: " + sf.logs.String() + "\nflows: " + string(body) + "\nexporters: " + string(ex)
			})
			t.Logf("softflowd's first export of a running stream showed in /api/v1/flows after %v (README: about 35 s)", time.Since(start).Round(time.Second))
			_ = ping.cmd.Process.Kill()
			_ = sf.cmd.Process.Kill()
		}},
		{regexp.MustCompile(`^sudo \./bin/netmon agent -hub-url http://localhost:8080 -hub-token <enroll token>$`), func(m []string) {
			startHub("")
			args := strings.Fields(strings.ReplaceAll(sub.Replace(m[0]), "<enroll token>", token))
			agent := startCmd(t, dir, env, args[0], args[1:]...)
			host, _ := os.Hostname()
			waitFor(t, 30*time.Second, "the agent under /api/v1/agents", func() bool {
				_, body := get("/api/v1/agents", "")
				var as []struct {
					Name   string `json:"name"`
					Online bool   `json:"online"`
				}
				return json.Unmarshal(body, &as) == nil && len(as) == 1 && as[0].Name == host && as[0].Online
			}, agent.logs.String)
			ranAgent = true
		}},
		{regexp.MustCompile(`^\./bin/netmon admin user create --username admin --role admin --db netmon\.db$`), func(m []string) {
			startHub("")
			args := strings.Fields(sub.Replace(m[0]))
			if out, err := run("a-long-admin-password\n", args...); err != nil {
				t.Fatalf("%s: %v\n%s", m[0], err, out)
			}
			// authentication is on now: anonymous reads are refused, the
			// new admin signs in
			if code, _ := get("/api/v1/agents", ""); code != http.StatusUnauthorized {
				t.Errorf("after the first admin, anonymous GET /api/v1/agents = %d, want 401", code)
			}
			resp, err := http.Post(base+"/api/login", "application/json", strings.NewReader(`{"username":"admin","password":"a-long-admin-password"}`))
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("admin login: %v %v", err, resp)
			}
			resp.Body.Close()
			ranAdmin = true
		}},
	}
	// The README's order is its story; the admin step must come last
	// (it turns authentication on), so run it after the others.
	var last []func()
	for _, c := range cmds {
		matched := false
		for _, s := range steps {
			if m := s.re.FindStringSubmatch(c); m != nil {
				matched = true
				if strings.Contains(c, "admin user create") {
					last = append(last, func() { s.do(m) })
				} else {
					s.do(m)
				}
				break
			}
		}
		if !matched {
			t.Errorf("the README shows %q, which this test does not run: add it here", c)
		}
	}
	for _, f := range last {
		f()
	}
	if !ranAgent || !ranAdmin || hub == nil {
		t.Errorf("the README lost a first-five-minutes step: agent %v, admin %v, hub %v", ranAgent, ranAdmin, hub != nil)
	}
	if hub != nil {
		hub.stop(t)
	}
}
