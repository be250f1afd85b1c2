package api

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden OpenAPI document in testdata/openapi")

// validate checks a document against the OpenAPI 3.1 schema with a real
// validator (pb33f/libopenapi-validator).
func validate(t *testing.T, name string, doc []byte) {
	t.Helper()
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		t.Fatalf("%s: parse: %v", name, err)
	}
	if v := d.GetVersion(); v != "3.1.0" {
		t.Fatalf("%s: openapi version %q, want 3.1.0", name, v)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		t.Fatalf("%s: build validator: %v", name, errs)
	}
	ok, verrs := v.ValidateDocument()
	for _, e := range verrs {
		t.Errorf("%s: %s: %s", name, e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			t.Errorf("  %s at %s (%s)", se.Reason, se.FieldPath, se.KeywordLocation)
		}
	}
	if !ok {
		t.Fatalf("%s is not a valid OpenAPI 3.1 document", name)
	}
}

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	// The extra test routes exercise parameters, bodies and permissions.
	s, _ := newTestServer(t, &fakePinger{}, testRoutes)
	validate(t, "openapi.json", s.doc.json)
	validate(t, "openapi.yaml", s.doc.yaml)
}

func TestValidatorRejectsABrokenDocument(t *testing.T) {
	// Guard against a validator that accepts anything: a response without
	// its required description must fail.
	doc := `{"openapi":"3.1.0","info":{"title":"x","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{}}}}}}`
	d, err := libopenapi.NewDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := validator.NewValidator(d)
	if ok, _ := v.ValidateDocument(); ok {
		t.Fatal("validator accepted a response without a description")
	}
}

func TestServedDocumentsAreIdentical(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, nil)
	j := do(t, s.Handler(), request{method: "GET", url: "/api/openapi.json"})
	y := do(t, s.Handler(), request{method: "GET", url: "/api/openapi.yaml"})
	if j.Code != 200 || y.Code != 200 {
		t.Fatalf("status json %d yaml %d", j.Code, y.Code)
	}
	if ct := j.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("json Content-Type %q", ct)
	}
	if ct := y.Header().Get("Content-Type"); ct != "application/yaml" {
		t.Errorf("yaml Content-Type %q", ct)
	}
	fromYAML, err := yaml.YAMLToJSON(y.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(j.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fromYAML, &b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("yaml differs from json (-json, +yaml):\n%s", diff)
	}
}

func TestNoDriftBetweenRouterAndDocument(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, nil)
	drift, err := Drift(s.engine.Routes(), s.doc.json)
	if err != nil {
		t.Fatal(err)
	}
	if len(drift) > 0 {
		t.Fatalf("router and document disagree:\n%s", strings.Join(drift, "\n"))
	}
	if n := len(s.engine.Routes()); n != len(s.routes) {
		t.Fatalf("router has %d routes, table %d", n, len(s.routes))
	}
}

func TestDriftDetectsAStrayRoute(t *testing.T) {
	// A copy of the router with one handler registered behind the table's back.
	s, _ := newTestServer(t, &fakePinger{}, nil)
	s.engine.GET("/api/v1/stray/:id", func(c *gin.Context) { c.Status(http.StatusOK) })
	drift, err := Drift(s.engine.Routes(), s.doc.json)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(drift, []string{"router only: GET /api/v1/stray/{id}"}); diff != "" {
		t.Errorf("drift (-got, +want):\n%s", diff)
	}

	// And the other way round: an operation the router does not serve.
	var doc map[string]any
	_ = json.Unmarshal(s.doc.json, &doc)
	doc["paths"].(map[string]any)["/api/v1/ghost"] = map[string]any{"get": map[string]any{}}
	ghost, _ := json.Marshal(doc)
	fresh, _ := newTestServer(t, &fakePinger{}, nil)
	drift, err = Drift(fresh.engine.Routes(), ghost)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(drift, []string{"document only: GET /api/v1/ghost"}); diff != "" {
		t.Errorf("drift (-got, +want):\n%s", diff)
	}
}

func TestTableRefusesDuplicates(t *testing.T) {
	dup := func(s *Server) []Route { return []Route{s.routeTable()[0]} }
	if _, err := build(nil, DefaultConfig(), Deps{}, func(s *Server) []Route { return append(s.routeTable(), dup(s)...) }); err == nil ||
		!strings.Contains(err.Error(), "GET /healthz declared twice") {
		t.Fatalf("duplicate route: err = %v", err)
	}
}

func TestGoldenDocument(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, nil)
	golden := filepath.Join("..", "..", "testdata", "openapi", "openapi.json")
	if *update {
		if err := os.WriteFile(golden, s.doc.json, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./app/api -run TestGoldenDocument -update)", err)
	}
	if diff := cmp.Diff(string(s.doc.json), string(want)); diff != "" {
		t.Errorf("document changed; review and run with -update (-got, +want):\n%s", diff)
	}
}

func TestDocumentDescribesParametersAndPermissions(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, testRoutes)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string           `json:"operationId"`
			Permission  string           `json:"x-netmon-permission"`
			Parameters  []map[string]any `json:"parameters"`
			Responses   map[string]any   `json:"responses"`
			Security    []any            `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(s.doc.json, &doc); err != nil {
		t.Fatal(err)
	}
	op := doc.Paths["/api/test/items/{id}"]["get"]
	if op.Permission != "view" || len(op.Security) != 2 {
		t.Errorf("permission %q security %v", op.Permission, op.Security)
	}
	var minutes map[string]any
	for _, p := range op.Parameters {
		if p["name"] == "minutes" {
			minutes = p
		}
	}
	wantSchema := map[string]any{"type": "integer", "minimum": 1.0, "maximum": 10080.0, "default": 60.0}
	if diff := cmp.Diff(minutes["schema"], any(wantSchema)); diff != "" {
		t.Errorf("minutes schema (-got, +want):\n%s", diff)
	}
	for _, code := range []string{"200", "400", "401", "403"} {
		if op.Responses[code] == nil {
			t.Errorf("response %s missing", code)
		}
	}
	health := doc.Paths["/healthz"]["get"]
	if health.Permission != "P" || len(health.Security) != 0 || health.Responses["401"] != nil {
		t.Errorf("healthz should be public: %+v", health)
	}
}

func TestDocsPageListsEveryRouteEscaped(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, testRoutes)
	w := do(t, s.Handler(), request{method: "GET", url: "/api/docs"})
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("status %d type %q", w.Code, w.Header().Get("Content-Type"))
	}
	page := w.Body.String()
	for _, r := range s.routes {
		if !strings.Contains(page, `id="`+r.OperationID+`"`) || !strings.Contains(page, r.Path) {
			t.Errorf("docs page lacks %s %s", r.Method, r.Path)
		}
	}
	if strings.Contains(page, "<script>alert(1)</script>") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("summary not escaped")
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("docs page is not self-contained (script or external URL)")
	}
	csp := w.Header().Get("Content-Security-Policy")
	m := regexp.MustCompile(`'nonce-([^']+)'`).FindStringSubmatch(csp)
	if m == nil || !strings.Contains(page, `<style nonce="`+m[1]+`">`) {
		t.Errorf("style nonce does not match the CSP %q", csp)
	}
	again := do(t, s.Handler(), request{method: "GET", url: "/api/docs"}).Header().Get("Content-Security-Policy")
	if again == csp {
		t.Error("the nonce did not change between responses")
	}
}
