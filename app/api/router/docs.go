package router

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"html/template"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// docsPage is /api/docs: one self-contained HTML file (no script, no
// external asset) listing every endpoint of the route table. html/template
// escapes everything; the only inline element is the style sheet, allowed
// by a per-response CSP nonce.
var docsPage = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>netmon API {{.Version}}</title>
<style nonce="NONCE">
body{font:14px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#1d2430;background:#fff}
@media (prefers-color-scheme:dark){body{color:#dde3ec;background:#12161c}table,td,th{border-color:#333b47!important}code{background:#1f2630!important}}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #ccd3dd;text-transform:capitalize}
.op{margin:1rem 0;padding:.6rem .8rem;border:1px solid #ccd3dd;border-radius:6px}
.m{display:inline-block;min-width:4.5rem;font-weight:700;font-family:monospace}
.GET{color:#1f7a3a}.POST{color:#1d5fbf}.PUT,.PATCH{color:#a35f00}.DELETE{color:#b3261e}
.path{font-family:monospace;font-size:1.05em}.perm{float:right;font-family:monospace;font-size:.9em}
table{border-collapse:collapse;margin:.4rem 0}td,th{border:1px solid #ccd3dd;padding:.2rem .5rem;text-align:left;vertical-align:top}
code{background:#eef1f5;padding:0 .25rem;border-radius:3px}
</style></head><body>
<h1>netmon API <small>{{.Version}}</small></h1>
<p>Machine-readable: <a href="/api/openapi.json">openapi.json</a> · <a href="/api/openapi.yaml">openapi.yaml</a> (OpenAPI 3.1).
Errors are <code>{"error": "…"}</code>; a protected route without a session answers 401 <code>{"error":"oturum gerekli","auth_required":true,"message":"session required"}</code>.
Permission codes: P public, S any signed-in identity, AG agent, EN enroll token; other codes are RBAC permissions.</p>
{{range .Groups}}<h2 id="{{.Tag}}">{{.Tag}}</h2>
{{range .Ops}}<div class="op" id="{{.OperationID}}"><span class="m {{.Method}}">{{.Method}}</span> <span class="path">{{.Path}}</span>
<span class="perm" title="permission">{{.Perm}}</span><div>{{.Summary}}</div>
{{if .Description}}<p>{{.Description}}</p>{{end}}
{{if .Params}}<table><tr><th>parameter</th><th>in</th><th>type</th><th>accepts</th><th>meaning</th></tr>
{{range .Params}}<tr><td><code>{{.Name}}</code>{{if .Required}} *{{end}}</td><td>{{.In}}</td><td>{{.Type}}</td><td>{{.Accepts}}</td><td>{{.Doc}}</td></tr>{{end}}</table>{{end}}
{{if .Body}}<div>Request body: <code>{{.Body}}</code> (application/json)</div>{{end}}
<div>Responses: {{range $i, $r := .Responses}}{{if $i}}, {{end}}<code>{{$r}}</code>{{end}}</div></div>
{{end}}{{end}}
</body></html>
`))

type docsOp struct {
	Method, Path, OperationID, Summary, Description, Perm, Body string
	Params                                                      []docsParam
	Responses                                                   []string
}

type docsParam struct {
	Name, In, Type, Accepts, Doc string
	Required                     bool
}

func renderDocs(routes []Route, info Info) ([]byte, error) {
	groups := map[string][]docsOp{}
	for _, r := range routes {
		op := docsOp{Method: r.Method, Path: r.Path, OperationID: r.OperationID, Summary: r.Summary, Description: r.Description, Perm: string(r.Perm)}
		if in := r.Do.in; in != nil {
			for _, p := range in.params {
				dp := docsParam{Name: p.name, In: p.in, Type: paramDoc(p)["schema"].(map[string]any)["type"].(string), Doc: p.doc, Required: p.required}
				var acc []string
				if r := strings.TrimPrefix(p.rangeText(), " "); r != "" {
					acc = append(acc, r)
				}
				if len(p.enum) > 0 {
					acc = append(acc, "one of "+strings.Join(p.enum, ", "))
				}
				if p.def != "" {
					acc = append(acc, "default "+p.def)
				}
				dp.Accepts = strings.Join(acc, "; ")
				op.Params = append(op.Params, dp)
			}
			if in.bodyIdx >= 0 {
				op.Body = typeName(in.bodyType)
			}
		}
		if r.Do.out != nil {
			op.Responses = append(op.Responses, "200 "+typeName(r.Do.out))
		}
		for _, rs := range r.Do.responses {
			op.Responses = append(op.Responses, strings.TrimSpace(strconv.Itoa(rs.Status)+" "+rs.ContentType))
		}
		groups[r.Tag] = append(groups[r.Tag], op)
	}
	type group struct {
		Tag string
		Ops []docsOp
	}
	var data struct {
		Version string
		Groups  []group
	}
	data.Version = info.Version
	for tag, ops := range groups {
		data.Groups = append(data.Groups, group{tag, ops})
	}
	sort.Slice(data.Groups, func(i, j int) bool { return data.Groups[i].Tag < data.Groups[j].Tag })
	var buf bytes.Buffer
	if err := docsPage.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Slice {
		return "array of " + typeName(t.Elem())
	}
	if t.Kind() == reflect.Pointer {
		return typeName(t.Elem())
	}
	if t.Name() == "" {
		return t.String()
	}
	return t.Name()
}

// ServeDocs writes the docs page with a fresh CSP nonce for its style.
func (d *Document) ServeDocs(c *gin.Context) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	nonce := base64.StdEncoding.EncodeToString(b[:])
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+nonce+"'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	page := bytes.Replace(d.html, []byte(`nonce="NONCE"`), []byte(`nonce="`+nonce+`"`), 1)
	c.Data(http.StatusOK, "text/html; charset=utf-8", page)
}
