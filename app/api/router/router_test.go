package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"
	"github.com/invopop/jsonschema"

	"netmon/app/errs"
)

// Types and routes of the machinery's own tests.

type itemsIn struct {
	ID      int64   `path:"id" min:"1" doc:"item id"`
	Minutes int     `query:"minutes" min:"1" max:"10080" default:"60" doc:"window in minutes"`
	By      string  `query:"by" enum:"5tuple,pair" default:"5tuple"`
	Ratio   float64 `query:"ratio" min:"0" max:"1"`
	Verbose bool    `query:"verbose"`
	Name    string  `query:"name" required:"true"`
}

type itemsOut struct {
	ID      int64   `json:"id"`
	Minutes int     `json:"minutes"`
	By      string  `json:"by"`
	Ratio   float64 `json:"ratio"`
	Verbose bool    `json:"verbose"`
	Name    string  `json:"name"`
}

type createIn struct {
	Body createBody `body:"json"`
}

type createBody struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

type errorBody struct {
	Error string `json:"error"`
}

type authErrorBody struct {
	Error string `json:"error"`
	Auth  bool   `json:"auth_required"`
}

type fileIn struct {
	File string `query:"file" required:"true"`
}

func testRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/items/{id}", OperationID: "getItem", Tag: "test", Perm: View,
			Summary: "binder test <script>alert(1)</script>",
			Do:      JSON(func(_ *gin.Context, in *itemsIn) (itemsOut, error) { return itemsOut(*in), nil })},
		{Method: http.MethodPost, Path: "/items", OperationID: "createItem", Tag: "test", Perm: Session,
			Summary: "body test",
			Do: JSON(func(_ *gin.Context, in *createIn) (createBody, error) {
				if in.Body.Name == "taken" {
					return createBody{}, errs.Conflictf("item %q exists", in.Body.Name)
				}
				return in.Body, nil
			})},
		{Method: http.MethodGet, Path: "/file", OperationID: "getFile", Tag: "files", Perm: Public,
			Summary: "raw with input",
			Do: RawIn(func(c *gin.Context, in *fileIn) error {
				if in.File == "missing" {
					return errs.NotFoundf("no such file")
				}
				c.String(http.StatusOK, in.File)
				return nil
			}, Response{Status: http.StatusOK, ContentType: "text/plain", Description: "the file"})},
		{Method: http.MethodPost, Path: "/agent/hello", OperationID: "hello", Tag: "agents", Perm: EnrollToken,
			Summary: "enroll", Do: JSON(func(*gin.Context, *NoInput) (createBody, error) { return createBody{}, nil })},
		{Method: http.MethodPost, Path: "/agent/telemetry", OperationID: "telemetry", Tag: "agents", Perm: AgentIdentity,
			Summary: "agent", Do: JSON(func(*gin.Context, *NoInput) (createBody, error) { return createBody{}, nil })},
	}
}

// statusOf is a minimal ErrorWriter's mapping; app/api has the real one.
var statusOf = map[errs.Kind]int{errs.Invalid: 400, errs.NotFound: 404, errs.Conflict: 409, errs.TooLarge: 413}

// lastErr is the last error the test ErrorWriter was handed.
var lastErr error

func testFail(c *gin.Context, err error) {
	lastErr = err
	status := http.StatusInternalServerError
	var se *StatusError
	if e, ok := errs.As(err); ok {
		status = statusOf[e.Kind]
	} else if errors.As(err, &se) {
		status = se.Status
	}
	c.AbortWithStatusJSON(status, errorBody{Error: err.Error()})
}

// serve registers routes (plus the document routes) on a fresh engine.
// testNames declares the schema names of the test bodies.
func testNames() map[reflect.Type]string {
	return map[reflect.Type]string{
		reflect.TypeFor[errorBody]():     "errorBody",
		reflect.TypeFor[authErrorBody](): "authErrorBody",
		reflect.TypeFor[createBody]():    "createBody",
		reflect.TypeFor[itemsOut]():      "itemsOut",
	}
}

func serve(t *testing.T, routes []Route) (*gin.Engine, *Document) {
	t.Helper()
	if err := CheckTable(routes); err != nil {
		t.Fatal(err)
	}
	doc, err := Render(routes, Info{Title: "test", Version: "1", ErrorBody: errorBody{}, AuthErrorBody: authErrorBody{}, Names: testNames()})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	Register(e, routes, func(Route) []gin.HandlerFunc { return nil }, testFail)
	e.GET("/docs", doc.ServeDocs)
	return e, doc
}

func call(e http.Handler, method, url, body string) *httptest.ResponseRecorder {
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, url, strings.NewReader(body))
	} else {
		req = httptest.NewRequest(method, url, nil)
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, req)
	return w
}

func TestBinder(t *testing.T) {
	e, _ := serve(t, testRoutes())
	tests := []struct {
		desc       string
		url        string
		wantStatus int
		wantBody   string
		wantField  string // the Invalid error's field
	}{
		{"defaults applied", "/items/7?name=a", 200,
			`{"id":7,"minutes":60,"by":"5tuple","ratio":0,"verbose":false,"name":"a"}`, ""},
		{"every parameter set", "/items/7?name=a&minutes=10080&by=pair&ratio=0.5&verbose=true", 200,
			`{"id":7,"minutes":10080,"by":"pair","ratio":0.5,"verbose":true,"name":"a"}`, ""},
		{"empty value means absent", "/items/7?name=a&minutes=", 200,
			`{"id":7,"minutes":60,"by":"5tuple","ratio":0,"verbose":false,"name":"a"}`, ""},
		{"above the range", "/items/7?name=a&minutes=10081", 400,
			`{"error":"query parameter \"minutes\": must be an integer between 1 and 10080"}`, "minutes"},
		{"below the range", "/items/7?name=a&minutes=0", 400,
			`{"error":"query parameter \"minutes\": must be an integer between 1 and 10080"}`, "minutes"},
		{"not an integer", "/items/7?name=a&minutes=1h", 400,
			`{"error":"query parameter \"minutes\": must be an integer between 1 and 10080"}`, "minutes"},
		{"integer overflow", "/items/7?name=a&minutes=99999999999999999999", 400,
			`{"error":"query parameter \"minutes\": must be an integer between 1 and 10080"}`, "minutes"},
		{"not in the enum", "/items/7?name=a&by=triple", 400,
			`{"error":"query parameter \"by\": must be one of 5tuple, pair"}`, "by"},
		{"NaN is not a number", "/items/7?name=a&ratio=NaN", 400,
			`{"error":"query parameter \"ratio\": must be a number between 0 and 1"}`, "ratio"},
		{"not a boolean", "/items/7?name=a&verbose=yes", 400,
			`{"error":"query parameter \"verbose\": must be true or false"}`, "verbose"},
		{"required missing", "/items/7", 400,
			`{"error":"query parameter \"name\" is required"}`, "name"},
		{"path parameter not a number", "/items/x?name=a", 400,
			`{"error":"path parameter \"id\": must be an integer of at least 1"}`, "id"},
		{"path parameter zero", "/items/0?name=a", 400,
			`{"error":"path parameter \"id\": must be an integer of at least 1"}`, "id"},
		{"raw endpoint binds too", "/file?file=a.pcap", 200, `a.pcap`, ""},
		{"raw endpoint's parameter error", "/file", 400, `{"error":"query parameter \"file\" is required"}`, "file"},
		{"raw endpoint's own error goes to the writer", "/file?file=missing", 404, `{"error":"no such file"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			lastErr = nil
			w := call(e, "GET", tt.url, "")
			if w.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", w.Code, tt.wantStatus, w.Body)
			}
			if diff := cmp.Diff(strings.TrimSpace(w.Body.String()), tt.wantBody); diff != "" {
				t.Errorf("body (-got, +want):\n%s", diff)
			}
			if tt.wantField != "" {
				if e, ok := errs.As(lastErr); !ok || e.Kind != errs.Invalid || e.Field != tt.wantField {
					t.Errorf("error %#v: want Invalid naming field %q", lastErr, tt.wantField)
				}
			}
		})
	}
}

func TestBodyErrors(t *testing.T) {
	e, _ := serve(t, testRoutes())
	tests := []struct {
		desc, body, contentType string
		wantStatus              int
		wantBody                string
		wantField               string
	}{
		{desc: "valid", body: `{"name":"a","count":2}`, wantStatus: 200, wantBody: `{"name":"a","count":2}`},
		{desc: "wrong field type names the field", body: `{"count":"two"}`, wantStatus: 400,
			wantBody: `{"error":"request body: field \"count\" must be an integer"}`, wantField: "count"},
		{desc: "empty body", body: " ", wantStatus: 400, wantBody: `{"error":"request body: empty; a JSON object is required"}`},
		{desc: "not JSON is a 415 of the HTTP layer", body: `name=a`, contentType: "text/plain", wantStatus: 415,
			wantBody: `{"error":"request body: Content-Type must be application/json, got \"text/plain\""}`},
		{desc: "handler's kind reaches the writer", body: `{"name":"taken"}`, wantStatus: 409, wantBody: `{"error":"item \"taken\" exists"}`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			lastErr = nil
			req := httptest.NewRequest("POST", "/items", strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			w := httptest.NewRecorder()
			e.ServeHTTP(w, req)
			if w.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", w.Code, tt.wantStatus, w.Body)
			}
			if diff := cmp.Diff(strings.TrimSpace(w.Body.String()), tt.wantBody); diff != "" {
				t.Errorf("body (-got, +want):\n%s", diff)
			}
			if tt.wantField != "" {
				if e, ok := errs.As(lastErr); !ok || e.Field != tt.wantField || e.Err == nil {
					t.Errorf("error %#v: want Invalid naming %q with its cause", lastErr, tt.wantField)
				}
			}
		})
	}
}

func TestCheckTable(t *testing.T) {
	ok := func(mod func(*Route)) []Route {
		rs := testRoutes()
		mod(&rs[1])
		return rs
	}
	tests := []struct {
		desc   string
		routes []Route
		want   string // substring of the error; "" = accepted
	}{
		{"the test table", testRoutes(), ""},
		{"a route twice", append(testRoutes(), testRoutes()[0]), "GET /items/{id} declared twice"},
		{"an operation id twice", ok(func(r *Route) { r.OperationID = "getItem" }), `operationId "getItem" empty or not unique`},
		{"no operation id", ok(func(r *Route) { r.OperationID = "" }), "empty or not unique"},
		{"no permission", ok(func(r *Route) { r.Perm = "" }), "permission, summary and tag are required"},
		{"no summary", ok(func(r *Route) { r.Summary = "" }), "permission, summary and tag are required"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			err := CheckTable(tt.routes)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDocumentDescribesParametersAndPermissions(t *testing.T) {
	_, d := serve(t, testRoutes())
	var doc struct {
		Paths map[string]map[string]struct {
			Permission string                    `json:"x-netmon-permission"`
			Parameters []map[string]any          `json:"parameters"`
			Responses  map[string]map[string]any `json:"responses"`
			Security   []map[string][]string     `json:"security"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(d.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	op := doc.Paths["/items/{id}"]["get"]
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
	// Each class: its code, its security schemes, and whether the
	// machinery added the 401 and 403 answers.
	tests := []struct {
		path, method string
		perm         string
		security     []string
		has401       bool
		has403       bool
	}{
		{"/items/{id}", "get", "view", []string{"sessionCookie", "bearer"}, true, true},
		{"/items", "post", "S", []string{"sessionCookie", "bearer"}, true, false},
		{"/file", "get", "P", nil, false, false},
		{"/agent/hello", "post", "EN", []string{"enrollToken"}, true, false},
		{"/agent/telemetry", "post", "AG", []string{"bearer", "agentCert"}, true, false},
	}
	for _, tt := range tests {
		op := doc.Paths[tt.path][tt.method]
		var sec []string
		for _, s := range op.Security {
			for name := range s {
				sec = append(sec, name)
			}
		}
		if op.Permission != tt.perm || !cmp.Equal(sec, tt.security) || (op.Responses["401"] != nil) != tt.has401 || (op.Responses["403"] != nil) != tt.has403 {
			t.Errorf("%s %s: permission %q security %v 401 %v 403 %v; want %q %v %v %v", tt.method, tt.path,
				op.Permission, sec, op.Responses["401"] != nil, op.Responses["403"] != nil, tt.perm, tt.security, tt.has401, tt.has403)
		}
	}
	if op.Responses["400"] == nil || op.Responses["200"] == nil {
		t.Errorf("binder's 400 or the 200 missing: %v", op.Responses)
	}
}

func TestDrift(t *testing.T) {
	e, d := serve(t, testRoutes())
	if drift, err := Drift(e.Routes(), d.JSON()); err != nil || len(drift) != 1 || drift[0] != "router only: GET /docs" {
		t.Fatalf("drift %v, %v: want only the test's own /docs", drift, err)
	}
	e.GET("/stray/:id", func(c *gin.Context) {})
	var doc map[string]any
	_ = json.Unmarshal(d.JSON(), &doc)
	doc["paths"].(map[string]any)["/ghost"] = map[string]any{"get": map[string]any{}}
	ghost, _ := json.Marshal(doc)
	drift, err := Drift(e.Routes(), ghost)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"document only: GET /ghost", "router only: GET /docs", "router only: GET /stray/{id}"}
	if diff := cmp.Diff(drift, want); diff != "" {
		t.Errorf("drift (-got, +want):\n%s", diff)
	}
}

func TestDocsPageListsEveryRouteEscaped(t *testing.T) {
	e, _ := serve(t, testRoutes())
	w := call(e, "GET", "/docs", "")
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("status %d type %q", w.Code, w.Header().Get("Content-Type"))
	}
	page := w.Body.String()
	for _, r := range testRoutes() {
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
	if again := call(e, "GET", "/docs", "").Header().Get("Content-Security-Policy"); again == csp {
		t.Error("the nonce did not change between responses")
	}
}

func TestGinPaths(t *testing.T) {
	for _, tt := range []struct{ openapi, gin string }{
		{"/healthz", "/healthz"}, {"/api/v1/users/{id}", "/api/v1/users/:id"}, {"/a/{x}/b/{y}", "/a/:x/b/:y"},
	} {
		if got := GinPath(tt.openapi); got != tt.gin {
			t.Errorf("GinPath(%q) = %q, want %q", tt.openapi, got, tt.gin)
		}
		if got := fromGinPath(tt.gin); got != tt.openapi {
			t.Errorf("fromGinPath(%q) = %q, want %q", tt.gin, got, tt.openapi)
		}
	}
}

func TestSchemaNames(t *testing.T) {
	names := map[reflect.Type]string{reflect.TypeFor[Route](): "RouteRow"}
	for _, tt := range []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[Route](), "RouteRow"},                                                    // declared: its declared name
		{reflect.TypeFor[jsonschema.Schema](), "undeclared:github.com/invopop/jsonschema.Schema"}, // marked for checkNames
		{reflect.TypeFor[string](), ""},                                                           // builtin: inlined
		{reflect.TypeFor[[]Route](), ""},                                                          // unnamed: inlined
	} {
		if got := schemaName(tt.t, names); got != tt.want {
			t.Errorf("schemaName(%s) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestRenderRefusesUndeclaredNames(t *testing.T) {
	type inner struct{ A int }
	type body struct{ In inner }
	routes := []Route{{Method: "GET", Path: "/x", OperationID: "x", Tag: "t", Perm: Public,
		Do: JSON(func(*gin.Context, *NoInput) (body, error) { return body{}, nil })}}
	names := map[reflect.Type]string{reflect.TypeFor[body](): "Body"}
	_, err := Render(routes, Info{Names: names})
	if want := "no schema name declared for netmon/app/api/router.inner"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Render with an undeclared type: err = %v, want it to contain %q", err, want)
	}
	names[reflect.TypeFor[inner]()] = "Inner"
	if _, err := Render(routes, Info{Names: names, Extensions: map[string]any{"roles": 1}}); err == nil || !strings.Contains(err.Error(), `"roles": the name must start with x-`) {
		t.Errorf("Render with a bare extension name: err = %v", err)
	}
	doc, err := Render(routes, Info{Names: names, Enums: []Enum{{Name: "Color", Description: "a colour", Values: []string{"red", "blue"}}},
		Extensions: map[string]any{"x-netmon-roles": map[string][]string{"viewer": {"view"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Roles      map[string][]string `json:"x-netmon-roles"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range got.Components.Schemas {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if diff := cmp.Diff(keys, []string{"Body", "Color", "Inner"}); diff != "" {
		t.Errorf("schemas (-got, +want):\n%s", diff)
	}
	var color bytes.Buffer
	if err := json.Compact(&color, got.Components.Schemas["Color"]); err != nil {
		t.Fatal(err)
	}
	if c := color.String(); c != `{"type":"string","enum":["red","blue"],"description":"a colour"}` {
		t.Errorf("enum schema %s", c)
	}
	if diff := cmp.Diff(got.Roles, map[string][]string{"viewer": {"view"}}); diff != "" {
		t.Errorf("x-netmon-roles (-got, +want):\n%s", diff)
	}
}
