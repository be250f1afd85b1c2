package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/invopop/jsonschema"
	"sigs.k8s.io/yaml"
)

// Info is what the document says beyond the route table.
type Info struct {
	// Title and Version fill the info block; Description is its
	// CommonMark text (the API's conventions).
	Title, Version, Description string
	// ErrorBody is a value of the type of every error answer, and
	// AuthErrorBody of the 401 of a protected route; their schemas are
	// added to the responses the machinery declares by itself.
	ErrorBody, AuthErrorBody any
	// Names is the schema name of every named type a body reaches, declared
	// by the API rather than derived from the Go package the type lives in,
	// so moving or renaming a Go type cannot rename the public contract.
	// Render fails on a type that is missing here.
	Names map[reflect.Type]string
	// Enums are closed sets of values added to the components as string
	// schemas with an enum, so clients generate them instead of copying them.
	Enums []Enum
	// Extensions are top-level x- members of the document (their names
	// must start with x-), for what is no schema: the role matrix.
	Extensions map[string]any
}

// Enum is a closed set of string values the API names.
type Enum struct {
	// Name is its component schema name; Description says what it is.
	Name, Description string
	// Values in the order clients should offer them.
	Values []string
}

// Document is the OpenAPI document and the /api/docs page in their served
// forms, rendered once from the route table.
type Document struct {
	json []byte
	yaml []byte
	html []byte
}

// JSON is the document as indented JSON.
func (d *Document) JSON() []byte { return d.json }

// YAML is the same document as YAML.
func (d *Document) YAML() []byte { return d.yaml }

// Render builds the OpenAPI 3.1 document (JSON Schema 2020-12 from the
// Go types the adapters recorded) and the docs page from the route table.
func Render(routes []Route, info Info) (*Document, error) {
	g := &docGen{schemas: map[string]*jsonschema.Schema{}, info: info}
	g.reflector = &jsonschema.Reflector{
		Anonymous:                 true,
		AllowAdditionalProperties: true,
		Namer:                     func(t reflect.Type) string { return schemaName(t, info.Names) },
	}
	paths := map[string]map[string]any{}
	tags := map[string]bool{}
	for _, r := range routes {
		op, err := g.operation(r)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
		}
		if paths[r.Path] == nil {
			paths[r.Path] = map[string]any{}
		}
		paths[r.Path][strings.ToLower(r.Method)] = op
		tags[r.Tag] = true
	}
	if err := g.checkNames(); err != nil {
		return nil, err
	}
	for _, e := range info.Enums {
		if _, ok := g.schemas[e.Name]; ok {
			return nil, fmt.Errorf("enum %s: a body type has that schema name", e.Name)
		}
		g.schemas[e.Name] = &jsonschema.Schema{Type: "string", Description: e.Description, Enum: toAny(e.Values)}
	}
	var tagList []map[string]string
	for t := range tags {
		tagList = append(tagList, map[string]string{"name": t})
	}
	sort.Slice(tagList, func(i, j int) bool { return tagList[i]["name"] < tagList[j]["name"] })
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       info.Title,
			"version":     info.Version,
			"description": info.Description,
			"license":     map[string]string{"name": "Proprietary", "identifier": "LicenseRef-netmon"},
		},
		"tags":  tagList,
		"paths": paths,
		"components": map[string]any{
			"schemas": g.schemas,
			"securitySchemes": map[string]any{
				"sessionCookie": map[string]string{"type": "apiKey", "in": "cookie", "name": "nm_session", "description": "session cookie set by POST /api/login"},
				"bearer":        map[string]string{"type": "http", "scheme": "bearer", "description": "login token, API token (bnt_...) or agent token"},
				"enrollToken":   map[string]string{"type": "apiKey", "in": "header", "name": "X-Enroll-Token", "description": "static or ent_ enrollment token"},
				"agentCert":     map[string]string{"type": "mutualTLS", "description": "client certificate issued by the hub CA (CN netmon-agent-<id>)"},
			},
		},
	}
	for k, v := range info.Extensions {
		if !strings.HasPrefix(k, "x-") {
			return nil, fmt.Errorf("document extension %q: the name must start with x-", k)
		}
		doc[k] = v
	}
	var enc bytes.Buffer
	je := json.NewEncoder(&enc)
	je.SetEscapeHTML(false) // served as JSON, never as HTML: keep <id> readable
	if err := je.Encode(doc); err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(enc.Bytes())
	// invopop writes references to its own $defs; the document keeps them
	// under components.
	raw = bytes.ReplaceAll(raw, []byte(`"#/$defs/`), []byte(`"#/components/schemas/`))
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, raw, "", "  "); err != nil {
		return nil, err
	}
	pretty.WriteByte('\n')
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, fmt.Errorf("convert to yaml: %w", err)
	}
	html, err := renderDocs(routes, info)
	if err != nil {
		return nil, fmt.Errorf("render docs page: %w", err)
	}
	return &Document{json: pretty.Bytes(), yaml: y, html: html}, nil
}

// undeclared marks, in a schema name, a type that Info.Names lacks: the
// name still keeps types apart while rendering, and checkNames refuses it.
const undeclared = "undeclared:"

// schemaName is t's declared name. Unnamed types (and the builtin ones)
// have none: they are inlined. A named type of a package that Info.Names
// lacks gets a marked name, which checkNames reports when the type became
// a component (named strings and numbers never do).
func schemaName(t reflect.Type, names map[reflect.Type]string) string {
	if n, ok := names[t]; ok {
		return n
	}
	if t.Name() == "" || t.PkgPath() == "" {
		return ""
	}
	return undeclared + t.PkgPath() + "." + t.Name()
}

// checkNames fails on every component whose type has no declared name.
func (g *docGen) checkNames() error {
	var missing []string
	for name := range g.schemas {
		if t, ok := strings.CutPrefix(name, undeclared); ok {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("no schema name declared for %s", strings.Join(missing, ", "))
}

func toAny(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

type docGen struct {
	info      Info
	reflector *jsonschema.Reflector
	schemas   map[string]*jsonschema.Schema
}

// schema reflects t, moves its definitions into components and returns the
// schema to use in place.
func (g *docGen) schema(t reflect.Type) (*jsonschema.Schema, error) {
	s := g.reflector.ReflectFromType(t)
	for name, def := range s.Definitions {
		if prev, ok := g.schemas[name]; ok && !schemaEqual(prev, def) {
			return nil, fmt.Errorf("two different types are named %s in the document", name)
		}
		g.schemas[name] = def
	}
	s.Definitions = nil
	s.Version = ""
	return s, nil
}

func schemaEqual(a, b *jsonschema.Schema) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func (g *docGen) errorResponse(desc string) (map[string]any, error) {
	s, err := g.schema(reflect.TypeOf(g.info.ErrorBody))
	if err != nil {
		return nil, err
	}
	return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": s}}}, nil
}

func (g *docGen) operation(r Route) (map[string]any, error) {
	op := map[string]any{
		"operationId":         r.OperationID,
		"summary":             r.Summary,
		"tags":                []string{r.Tag},
		"x-netmon-permission": string(r.Perm),
	}
	if r.Description != "" {
		op["description"] = r.Description
	}
	if r.Global {
		op["x-netmon-global"] = true
	}
	if w := r.PermWhen; w != nil {
		op["x-netmon-permission-when"] = map[string]string{w.Param + "=" + w.Value: string(w.Perm)}
	}
	switch r.Perm {
	case Public:
		op["security"] = []any{}
	case EnrollToken:
		op["security"] = []any{map[string][]string{"enrollToken": {}}}
	case AgentIdentity:
		op["security"] = []any{map[string][]string{"bearer": {}}, map[string][]string{"agentCert": {}}}
	default:
		op["security"] = []any{map[string][]string{"sessionCookie": {}}, map[string][]string{"bearer": {}}}
	}
	responses := map[string]any{}
	e := r.Do
	if e.in != nil {
		var params []any
		for _, p := range e.in.params {
			params = append(params, paramDoc(p))
		}
		if len(params) > 0 {
			op["parameters"] = params
			resp, err := g.errorResponse("a parameter is malformed or out of range; the message names it")
			if err != nil {
				return nil, err
			}
			responses["400"] = resp
		}
		if e.in.bodyIdx >= 0 {
			s, err := g.schema(e.in.bodyType)
			if err != nil {
				return nil, err
			}
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": s}}}
			for code, desc := range map[string]string{
				"400": "the body is not valid JSON or a field has the wrong type",
				"413": "the body exceeds the size limit",
				"415": "the body is not application/json",
			} {
				resp, err := g.errorResponse(desc)
				if err != nil {
					return nil, err
				}
				responses[code] = resp
			}
		}
	}
	if e.out != nil {
		s, err := g.schema(e.out)
		if err != nil {
			return nil, err
		}
		responses[strconv.Itoa(e.status)] = map[string]any{"description": http.StatusText(e.status), "content": map[string]any{"application/json": map[string]any{"schema": s}}}
	}
	for _, rs := range e.responses {
		content := map[string]any{}
		if rs.Body != nil {
			s, err := g.schema(reflect.TypeOf(rs.Body))
			if err != nil {
				return nil, err
			}
			content[rs.ContentType] = map[string]any{"schema": s}
		} else {
			content[rs.ContentType] = map[string]any{"schema": map[string]string{"type": "string"}}
		}
		responses[strconv.Itoa(rs.Status)] = map[string]any{"description": rs.Description, "content": content}
	}
	for code, desc := range r.Errors {
		resp, err := g.errorResponse(desc)
		if err != nil {
			return nil, err
		}
		responses[strconv.Itoa(code)] = resp
	}
	if r.Perm != Public {
		s, err := g.schema(reflect.TypeOf(g.info.AuthErrorBody))
		if err != nil {
			return nil, err
		}
		responses["401"] = map[string]any{"description": "no valid session, bearer or agent identity", "content": map[string]any{"application/json": map[string]any{"schema": s}}}
		if r.Perm != Session && r.Perm.UserPerm() {
			needs := r.Perm
			if needs == Scrape {
				needs = Admin // the scrape token aside, the admin permission
			}
			desc := "the identity lacks the permission " + string(needs)
			if r.Global {
				desc += ", or is site-bound (the resource covers every site)"
			}
			resp, err := g.errorResponse(desc)
			if err != nil {
				return nil, err
			}
			responses["403"] = resp
		}
	}
	if len(responses) == 0 {
		return nil, fmt.Errorf("no response declared")
	}
	op["responses"] = responses
	return op, nil
}

func paramDoc(p paramSpec) map[string]any {
	s := map[string]any{}
	switch p.kind {
	case reflect.Int, reflect.Int64:
		s["type"] = "integer"
	case reflect.Float64:
		s["type"] = "number"
	case reflect.Bool:
		s["type"] = "boolean"
	default:
		s["type"] = "string"
	}
	if p.min != nil {
		s["minimum"] = *p.min
	}
	if p.max != nil {
		s["maximum"] = *p.max
	}
	if len(p.enum) > 0 {
		s["enum"] = p.enum
	}
	if p.def != "" {
		v, _ := p.parse(p.def)
		s["default"] = v.Interface()
	}
	d := map[string]any{"name": p.name, "in": p.in, "required": p.required, "schema": s}
	if p.doc != "" {
		d["description"] = p.doc
	}
	return d
}

// Drift lists the differences between the routes registered on a gin
// engine and the operations of an OpenAPI document (JSON), as
// "router only: GET /x" and "document only: GET /y" lines. Empty means the
// two agree, which spec section 9.6 requires.
func Drift(registered gin.RoutesInfo, docJSON []byte) ([]string, error) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(docJSON, &doc); err != nil {
		return nil, fmt.Errorf("parse document: %w", err)
	}
	inDoc := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			inDoc[strings.ToUpper(m)+" "+p] = true
		}
	}
	inRouter := map[string]bool{}
	for _, r := range registered {
		inRouter[r.Method+" "+fromGinPath(r.Path)] = true
	}
	var out []string
	for k := range inRouter {
		if !inDoc[k] {
			out = append(out, "router only: "+k)
		}
	}
	for k := range inDoc {
		if !inRouter[k] {
			out = append(out, "document only: "+k)
		}
	}
	sort.Strings(out)
	return out, nil
}
