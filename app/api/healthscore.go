package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"netmon/alerting/health"
	"netmon/app/api/router"
)

// NetworkScore is the network health score (*health.Service): it reads
// typed counts from the owners and caches per site; the handler only
// translates.
type NetworkScore interface {
	Score(ctx context.Context, site string) (health.NetworkHealth, error)
}

func (s *Server) networkHealth(c *gin.Context, _ *router.NoInput) (health.NetworkHealth, error) {
	if s.deps.Health == nil {
		return health.NetworkHealth{Score: 100, Deductions: []health.Deduction{}}, nil
	}
	return s.deps.Health.Score(c, callerOf(c).SiteFilter())
}
