package router

import (
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"
)

// ErrorWriter answers a request with err (app/api's writeError): the
// adapters hand it every binding and handler error.
type ErrorWriter func(c *gin.Context, err error)

// Register adds every route to e, with chain(r) (the route's middleware:
// body limit, access check...) before the route's own handler, whose
// errors go to fail. It is the only place that calls e.Handle, so the
// router serves exactly the table.
func Register(e *gin.Engine, routes []Route, chain func(Route) []gin.HandlerFunc, fail ErrorWriter) {
	for _, r := range routes {
		handlers := append(chain(r), r.Do.handler(fail))
		e.Handle(r.Method, GinPath(r.Path), handlers...)
	}
}

// CheckTable refuses a table with duplicate routes or operation ids, or a
// row without its permission, summary or tag.
func CheckTable(routes []Route) error {
	seen := map[string]bool{}
	ops := map[string]bool{}
	for _, r := range routes {
		k := r.Method + " " + r.Path
		if seen[k] {
			return fmt.Errorf("route table: %s declared twice", k)
		}
		if ops[r.OperationID] || r.OperationID == "" {
			return fmt.Errorf("route table: %s: operationId %q empty or not unique", k, r.OperationID)
		}
		if r.Perm == "" || r.Summary == "" || r.Tag == "" {
			return fmt.Errorf("route table: %s: permission, summary and tag are required", k)
		}
		seen[k], ops[r.OperationID] = true, true
	}
	return nil
}

// GinPath turns the OpenAPI template /a/{id}/b into gin's /a/:id/b.
func GinPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '{':
			b.WriteByte(':')
		case '}':
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}

// fromGinPath turns gin's /a/:id/b (or *rest) into /a/{id}/b.
func fromGinPath(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		if strings.HasPrefix(part, ":") || strings.HasPrefix(part, "*") {
			parts[i] = "{" + part[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}
