package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// ChangeTimeout bounds a request that changes state once it no longer
// follows its client (see detach).
const ChangeTimeout = 30 * time.Second

// changes reports whether a method may change state. Reads (GET, HEAD,
// OPTIONS) follow the client's cancellation; everything else is detached.
func changes(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// detach runs the rest of a state-changing request on a context the client
// cannot cancel, bounded by ChangeTimeout (STYLE habit 19). An audited
// change and its audit record commit in one transaction; were that
// transaction on the request's context, a client that sends the request
// and half-closes its side (net/http then cancels the context) could get
// the change — a login's session, say — while the record is rolled back.
// The route table applies this to every route whose method can change
// state, so no handler can forget it.
func detach(c *gin.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request.Context()), ChangeTimeout)
	defer cancel()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}
