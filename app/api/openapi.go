package api

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

// renderedDoc is the OpenAPI document in its served forms, rendered once.
type renderedDoc struct {
	json []byte
	yaml []byte
	html []byte
}

const apiDescription = `netmon's hub API. Conventions:

* Bodies are JSON; timestamps named ` + "`ts`" + ` are Unix seconds. Member names match in any case, a name given twice
  in one object is refused (400), invalid UTF-8 in a string becomes U+FFFD, unknown names are ignored.
* Every error other than the authentication failure is ` + "`{\"error\": \"<message>\"}`" + ` with a fitting status:
  400 for a malformed or out-of-range parameter (the message names the parameter and its range),
  404 for an unknown ` + "`/api/...`" + ` path, 405 (with an ` + "`Allow`" + ` header) for a wrong method,
  413 when a body exceeds the limit (1 MiB unless a route says otherwise), 415 for a body that is not JSON,
  500 for a server fault (its detail is in the hub log under the response's ` + "`X-Request-Id`" + `).
* A protected route without a valid session or bearer answers 401 ` + "`{\"error\":\"oturum gerekli\",\"auth_required\":true,\"message\":\"session required\"}`" + `.
* Each operation's ` + "`x-netmon-permission`" + ` is its access class from the spec: P (public), S (any signed-in identity),
  or a permission (view, operate, analyze, devices, agents, admin, global-admin), AG (agent identity), EN (enroll token).
* Every response carries ` + "`X-Request-Id`" + ` (the request's own when it sent a well-formed one).
* Paths outside ` + "`/api`" + `, ` + "`/ws`" + `, ` + "`/healthz`" + `, ` + "`/readyz`" + ` and ` + "`/metrics`" + ` serve the web UI shell.`

// renderDocument builds the OpenAPI 3.1 document from the route table.
func renderDocument(routes []Route, version string) (renderedDoc, error) {
	g := &docGen{schemas: map[string]*jsonschema.Schema{}}
	g.reflector = &jsonschema.Reflector{
		Anonymous:                 true,
		AllowAdditionalProperties: true,
		Namer:                     schemaName,
	}
	paths := map[string]map[string]any{}
	tags := map[string]bool{}
	for _, r := range routes {
		op, err := g.operation(r)
		if err != nil {
			return renderedDoc{}, fmt.Errorf("%s %s: %w", r.Method, r.Path, err)
		}
		if paths[r.Path] == nil {
			paths[r.Path] = map[string]any{}
		}
		paths[r.Path][strings.ToLower(r.Method)] = op
		tags[r.Tag] = true
	}
	var tagList []map[string]string
	for t := range tags {
		tagList = append(tagList, map[string]string{"name": t})
	}
	sort.Slice(tagList, func(i, j int) bool { return tagList[i]["name"] < tagList[j]["name"] })
	doc := map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":       "netmon",
			"version":     version,
			"description": apiDescription,
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
	var enc bytes.Buffer
	je := json.NewEncoder(&enc)
	je.SetEscapeHTML(false) // served as JSON, never as HTML: keep <id> readable
	if err := je.Encode(doc); err != nil {
		return renderedDoc{}, err
	}
	raw := bytes.TrimSpace(enc.Bytes())
	// invopop writes references to its own $defs; the document keeps them
	// under components.
	raw = bytes.ReplaceAll(raw, []byte(`"#/$defs/`), []byte(`"#/components/schemas/`))
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, raw, "", "  "); err != nil {
		return renderedDoc{}, err
	}
	pretty.WriteByte('\n')
	y, err := yaml.JSONToYAML(raw)
	if err != nil {
		return renderedDoc{}, fmt.Errorf("convert to yaml: %w", err)
	}
	html, err := renderDocs(routes, version)
	if err != nil {
		return renderedDoc{}, fmt.Errorf("render docs page: %w", err)
	}
	return renderedDoc{json: pretty.Bytes(), yaml: y, html: html}, nil
}

// schemaPrefixes keep the document's schema names, which the console's
// generated types use, when a package is split or renamed: the types of
// these packages are named with the prefix of the package they came from.
var schemaPrefixes = map[string]string{
	"netmon/app/fleet/agents": "Fleet", // app/fleet split by job (issue 13)
	"netmon/app/fleet/enroll": "Fleet",
	"netmon/app/fleet/intake": "Fleet",
	"netmon/capture/pcaprec":  "Record", // was capture/record
}

// schemaName names a component schema: the bare type name for types of
// this package, the package name and type name otherwise
// (capture.Bucket -> CaptureBucket), so types of different packages never
// collide.
func schemaName(t reflect.Type) string {
	pkg := t.PkgPath()
	if pkg == "" || pkg == reflect.TypeFor[Server]().PkgPath() {
		return t.Name()
	}
	if prefix, ok := schemaPrefixes[pkg]; ok {
		return prefix + t.Name()
	}
	base := pkg[strings.LastIndex(pkg, "/")+1:]
	return strings.ToUpper(base[:1]) + base[1:] + t.Name()
}

type docGen struct {
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
	s, err := g.schema(reflect.TypeFor[ErrorBody]())
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
	switch r.Perm {
	case Public:
		op["security"] = []any{}
	case Enroll:
		op["security"] = []any{map[string][]string{"enrollToken": {}}}
	case Agent:
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
		s, err := g.schema(reflect.TypeFor[AuthErrorBody]())
		if err != nil {
			return nil, err
		}
		responses["401"] = map[string]any{"description": "no valid session, bearer or agent identity", "content": map[string]any{"application/json": map[string]any{"schema": s}}}
		if r.Perm != Session && r.Perm != Agent && r.Perm != Enroll {
			resp, err := g.errorResponse("the identity lacks the permission " + string(r.Perm))
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
