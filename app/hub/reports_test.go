package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"netmon/app/config"
	"netmon/store/storetest"
)

// reportUsers signs in the roles the report routes tell apart: a viewer,
// an analyst and a site-admin of site a (multi-site mode).
func reportUsers(t *testing.T, h *testHub, boot *client) (viewer, analyst, siteA *client) {
	t.Helper()
	boot.createUser("vera", "viewer-pass-1", "viewer", "")
	boot.createUser("ana", "analyst-pass-1", "analyst", "")
	boot.createUser("sam", "site-admin-pass-1", "site-admin", "a")
	viewer, analyst, siteA = h.client(t), h.client(t), h.client(t)
	viewer.login("vera", "viewer-pass-1")
	analyst.login("ana", "analyst-pass-1")
	siteA.login("sam", "site-admin-pass-1")
	return viewer, analyst, siteA
}

// TestReportRoutes is issue 31's permissions, headers and bad input
// through the hub: the analyze permission for traffic and enterprise,
// view for compliance; a PDF attachment named for type, range and site
// whose SHA-256 header, archive row and archived bytes agree; a
// site-bound caller pinned to its site; 400 naming the parameter with
// nothing archived.
func TestReportRoutes(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		viewer, analyst, siteA := reportUsers(t, h, boot)

		// Permissions (spec 4.3, 5.7).
		for _, c := range []struct {
			who  *client
			url  string
			code int
		}{
			{viewer, "/api/report", 403},
			{viewer, "/api/report?type=traffic", 403},
			{viewer, "/api/report?type=enterprise", 403},
			{viewer, "/api/report?type=compliance", 200},
			{analyst, "/api/report?type=compliance", 200},
			{analyst, "/api/report?type=enterprise&days=30", 200},
			{siteA, "/api/report?type=enterprise&site=b", 403},
		} {
			if r := c.who.call("GET", c.url, nil); r.code != c.code {
				t.Errorf("GET %s: %d %.200s, want %d", c.url, r.code, r.body, c.code)
			}
		}
		if r := viewer.call("GET", "/api/report?type=traffic", nil); r.body != `{"error":"permission denied: this needs the analyze permission, which the role viewer lacks"}` {
			t.Errorf("viewer's traffic report: %s", r.body)
		}

		// A PDF: attachment, named, hashed, archived byte for byte (read
		// whole: call trims the body, and a PDF ends in a newline).
		r := analyst.call("GET", "/api/report?type=traffic&days=7&format=pdf", nil).must(t, 200)
		r.body = string(analyst.raw(t, "/api/v1/reports/archive/"+r.header.Get("X-Netmon-Report-Archive-Id")))
		if ct := r.header.Get("Content-Type"); ct != "application/pdf" {
			t.Errorf("Content-Type %q", ct)
		}
		if !regexp.MustCompile(`^attachment; filename=netmon-traffic-all-\d{8}-\d{8}\.pdf$`).MatchString(r.header.Get("Content-Disposition")) {
			t.Errorf("Content-Disposition %q", r.header.Get("Content-Disposition"))
		}
		if !strings.HasPrefix(r.body, "%PDF-") {
			t.Errorf("body is no PDF: %.20q", r.body)
		}
		sum := sha256.Sum256([]byte(r.body))
		if got := r.header.Get("X-Netmon-Report-Sha256"); got != hex.EncodeToString(sum[:]) {
			t.Errorf("X-Netmon-Report-Sha256 %q, body hashes to %x", got, sum)
		}
		id := r.header.Get("X-Netmon-Report-Archive-Id")
		var archive []struct {
			ID       int64  `json:"id"`
			Type     string `json:"type"`
			Site     string `json:"site"`
			Format   string `json:"format"`
			SHA256   string `json:"sha256"`
			Filename string `json:"filename"`
		}
		analyst.call("GET", "/api/v1/reports/archive", nil).must(t, 200).decode(t, &archive)
		if len(archive) != 4 { // compliance twice, enterprise, this PDF (the site-admin's refusal archived nothing)
			t.Fatalf("%d archived reports, want 4: %+v", len(archive), archive)
		}
		if newest := archive[0]; fmt.Sprint(newest.ID) != id || newest.SHA256 != hex.EncodeToString(sum[:]) || newest.Format != "pdf" || newest.Type != "traffic" {
			t.Errorf("newest archived %+v, want id %s sha %x", newest, id, sum)
		}

		// The viewer reads the compliance reports of the archive only
		// (it may generate no other), and an HTML report comes with its
		// own sandboxing policy.
		var seen []struct {
			ID   int64  `json:"id"`
			Type string `json:"type"`
		}
		viewer.call("GET", "/api/v1/reports/archive", nil).must(t, 200).decode(t, &seen)
		if len(seen) != 2 || seen[0].Type != "compliance" || seen[1].Type != "compliance" {
			t.Errorf("the viewer's archive: %+v, want the two compliance reports", seen)
		}
		if r := viewer.call("GET", "/api/v1/reports/archive/"+id, nil); r.code != 404 {
			t.Errorf("the viewer downloads a traffic report: %d %s", r.code, r.body)
		}
		page := viewer.call("GET", fmt.Sprintf("/api/v1/reports/archive/%d?inline=true", seen[0].ID), nil).must(t, 200)
		if csp := page.header.Get("Content-Security-Policy"); csp != "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'" {
			t.Errorf("report CSP %q", csp)
		}
		if d := page.header.Get("Content-Disposition"); !strings.HasPrefix(d, "inline; filename=netmon-compliance-all-") || page.header.Get("X-Frame-Options") != "SAMEORIGIN" {
			t.Errorf("inline report: %q, X-Frame-Options %q", d, page.header.Get("X-Frame-Options"))
		}

		// The site-admin: its own site only, and another site's report
		// answers like a missing one.
		siteA.call("GET", "/api/report?type=enterprise", nil).must(t, 200)
		var own []struct {
			ID   int64  `json:"id"`
			Site string `json:"site"`
		}
		siteA.call("GET", "/api/v1/reports/archive", nil).must(t, 200).decode(t, &own)
		if len(own) != 1 || own[0].Site != "a" {
			t.Errorf("site a's archive: %+v, want its one report", own)
		}
		other := siteA.call("GET", "/api/v1/reports/archive/"+id, nil)
		missing := siteA.call("GET", "/api/v1/reports/archive/999999", nil)
		if other.code != 404 || other.body != strings.Replace(missing.body, "999999", id, 1) {
			t.Errorf("another site's report: %d %s; a missing one: %d %s", other.code, other.body, missing.code, missing.body)
		}

		// Bad input: 400 naming the parameter, nothing archived.
		before := len(archive) + 1 // and site a's report
		for _, c := range []struct{ url, names string }{
			{"/api/report?days=0", "days"},
			{"/api/report?days=91", "days"},
			{"/api/report?type=weekly", "type"},
			{"/api/report?format=docx", "format"},
		} {
			r := analyst.call("GET", c.url, nil)
			if r.code != 400 || !strings.Contains(r.body, `\"`+c.names+`\"`) && !strings.Contains(r.body, c.names) {
				t.Errorf("GET %s: %d %s, want 400 naming %s", c.url, r.code, r.body, c.names)
			}
		}
		for _, c := range []struct {
			body  map[string]any
			names string
		}{
			{map[string]any{"name": "weekly", "spec": "fortnightly:09:00", "recipients": []string{"ops@example.com"}}, "spec"},
			{map[string]any{"name": "weekly", "spec": "weekly:mon:09:00", "timezone": "Mars/Olympus", "recipients": []string{"ops@example.com"}}, "timezone"},
			{map[string]any{"name": "weekly", "spec": "weekly:mon:09:00", "recipients": []string{"not an address"}}, "recipients"},
			{map[string]any{"name": "weekly", "spec": "weekly:mon:09:00", "days": 91}, "days"},
			{map[string]any{"name": "weekly", "spec": "weekly:mon:09:00", "type": "weekly"}, "type"},
		} {
			r := analyst.call("POST", "/api/v1/reports/schedules", c.body)
			if r.code != 400 || !strings.Contains(r.body, c.names) {
				t.Errorf("schedule %v: %d %s, want 400 naming %s", c.body, r.code, r.body, c.names)
			}
		}
		var after []struct{}
		analyst.call("GET", "/api/v1/reports/archive", nil).must(t, 200).decode(t, &after)
		if len(after) != before {
			t.Errorf("%d archived reports after bad input, want %d", len(after), before)
		}
		if r := analyst.call("GET", "/api/v1/reports/schedules", nil).must(t, 200); r.body != "[]" {
			t.Errorf("schedules after bad input: %s", r.body)
		}

		// SLA targets: the viewer reads, the analyst writes.
		viewer.call("GET", "/api/v1/sla/targets", nil).must(t, 200)
		if r := viewer.call("POST", "/api/v1/sla/targets", map[string]any{"name": "uptime", "metric": "agent_uptime", "threshold": 99}); r.code != 403 {
			t.Errorf("viewer creates a target: %d %s", r.code, r.body)
		}
		analyst.call("POST", "/api/v1/sla/targets", map[string]any{"name": "uptime", "metric": "agent_uptime", "threshold": 99, "window_hours": 24}).must(t, 200)
		var targets []struct {
			Target struct {
				Name string `json:"name"`
			} `json:"target"`
			NoData bool `json:"no_data"`
		}
		viewer.call("GET", "/api/v1/sla/targets", nil).must(t, 200).decode(t, &targets)
		if len(targets) != 1 || targets[0].Target.Name != "uptime" || !targets[0].NoData {
			t.Errorf("targets %+v, want the one without data", targets)
		}
	})
}

// raw is the whole body of a GET (call trims it), failing unless 200.
func (c *client) raw(t *testing.T, path string) []byte {
	t.Helper()
	req, err := http.NewRequest("GET", c.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if c.cookie != "" {
		req.AddCookie(&http.Cookie{Name: "nm_session", Value: c.cookie})
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return b
}
