package api

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"sigs.k8s.io/yaml"

	"netmon/app/api/router"
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
	validate(t, "openapi.json", s.doc.JSON())
	validate(t, "openapi.yaml", s.doc.YAML())
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
	drift, err := router.Drift(s.engine.Routes(), s.doc.JSON())
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

func TestTableRefusesDuplicates(t *testing.T) {
	dup := func(s *Server) []router.Route { return []router.Route{s.routeTable()[0]} }
	if _, err := build(nil, DefaultConfig(), Deps{Auth: openAccounts{}}, func(s *Server) []router.Route { return append(s.routeTable(), dup(s)...) }); err == nil ||
		!strings.Contains(err.Error(), "GET /healthz declared twice") {
		t.Fatalf("duplicate route: err = %v", err)
	}
}

func TestGoldenDocument(t *testing.T) {
	s, _ := newTestServer(t, &fakePinger{}, nil)
	golden := filepath.Join("..", "..", "testdata", "openapi", "openapi.json")
	if *update {
		if err := os.WriteFile(golden, s.doc.JSON(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./app/api -run TestGoldenDocument -update)", err)
	}
	if diff := cmp.Diff(string(s.doc.JSON()), string(want)); diff != "" {
		t.Errorf("document changed; review and run with -update (-got, +want):\n%s", diff)
	}
}
