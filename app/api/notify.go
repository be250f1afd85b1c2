package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"netmon/alerting/notify"
	"netmon/app/api/router"
	"netmon/store"
	"netmon/store/record"
)

// Alert delivery (issue 19): routing rules, the delivery log and the
// "send test" of each channel. The rules are alerting/notify's resource
// (RouteService).

// AlertRoutes are the routing rules (*notify.RouteService): it
// validates, stores with the audit record and hands them to the
// notifier; these handlers only translate.
type AlertRoutes interface {
	List(ctx context.Context) ([]notify.Route, error)
	Create(ctx context.Context, who store.AuditActor, r notify.Route) (notify.Route, error)
	Update(ctx context.Context, who store.AuditActor, id string, r notify.Route) (notify.Route, error)
	Delete(ctx context.Context, who store.AuditActor, id string) error
}

// ChannelProbe runs a channel's "send test" and records it
// (*notify.Probe).
type ChannelProbe interface {
	Test(ctx context.Context, who store.AuditActor, channel string) (ok bool, reason string, err error)
}

// Notifier is the delivery side (*notify.Notifier).
type Notifier interface {
	// GroupResolved closes the tickets of an alert group (an incident
	// resolved or closed); it never blocks.
	GroupResolved(id, ts int64) bool
}

// DeliveryLog reads the delivery log (*store.DB).
type DeliveryLog interface {
	Deliveries(ctx context.Context, f store.DeliveryFilter) ([]record.AlertDelivery, error)
}

type routeIn struct {
	ID string `path:"id" doc:"route id"`
}

type routeBodyIn struct {
	Body notify.Route `body:"json"`
}

type routeUpdateIn struct {
	ID   string       `path:"id" doc:"route id"`
	Body notify.Route `body:"json"`
}

func (s *Server) listRoutes(c *gin.Context, _ *router.NoInput) ([]notify.Route, error) {
	if callerOf(c).SiteBound() {
		return nil, errAlertsGlobal
	}
	return s.deps.AlertRoutes.List(c)
}

func (s *Server) createRoute(c *gin.Context, in *routeBodyIn) (notify.Route, error) {
	if callerOf(c).SiteBound() {
		return notify.Route{}, errAlertsGlobal
	}
	return s.deps.AlertRoutes.Create(c, auditActor(c), in.Body)
}

func (s *Server) updateRoute(c *gin.Context, in *routeUpdateIn) (notify.Route, error) {
	if callerOf(c).SiteBound() {
		return notify.Route{}, errAlertsGlobal
	}
	return s.deps.AlertRoutes.Update(c, auditActor(c), in.ID, in.Body)
}

func (s *Server) deleteRoute(c *gin.Context, in *routeIn) (OKResult, error) {
	if callerOf(c).SiteBound() {
		return OKResult{}, errAlertsGlobal
	}
	err := s.deps.AlertRoutes.Delete(c, auditActor(c), in.ID)
	return OKResult{OK: err == nil}, err
}

// ChannelTestResult is the answer of a "send test": whether the channel
// accepted it and, if not, why: one of notify's reasons (a status, a
// refusal, "authentication failed", ...), never the peer's words, its
// body or the channel's URL.
type ChannelTestResult struct {
	Channel string `json:"channel"`
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
}

type channelIn struct {
	Channel string `path:"channel" enum:"generic_url,chatapp1,chatapp2,messenger,teamchat,email,webhook_v2,siem,ticket" doc:"channel name"`
}

func (s *Server) testChannel(c *gin.Context, in *channelIn) (ChannelTestResult, error) {
	if callerOf(c).SiteBound() {
		return ChannelTestResult{}, errAlertsGlobal
	}
	ok, reason, err := s.deps.ChannelProbe.Test(c, auditActor(c), in.Channel)
	if err != nil {
		return ChannelTestResult{}, err
	}
	return ChannelTestResult{Channel: in.Channel, OK: ok, Error: reason}, nil
}

type deliveriesIn struct {
	Channel string `query:"channel" doc:"only this channel"`
	Status  string `query:"status" enum:"pending,delivered,failed" doc:"only this status"`
	EventID int64  `query:"event" min:"0" doc:"only this event's deliveries (0: any)"`
	Limit   int    `query:"limit" min:"1" max:"1000" default:"100" doc:"newest rows"`
}

func (s *Server) deliveries(c *gin.Context, in *deliveriesIn) ([]AlertDelivery, error) {
	if callerOf(c).SiteBound() {
		return nil, errAlertsGlobal
	}
	if s.deps.Deliveries == nil {
		return []AlertDelivery{}, nil
	}
	ds, err := s.deps.Deliveries.Deliveries(c, store.DeliveryFilter{Channel: in.Channel, Status: in.Status, EventID: in.EventID, Limit: in.Limit})
	return publicDeliveries(ds), err
}

// publicDeliveries shows each stored error as one of notify's reasons:
// rows written before the reasons existed quote the channel's URL
// (issue 28), and the alert detail shows them to any viewer.
func publicDeliveries(ds []record.AlertDelivery) []AlertDelivery {
	out := convertAll(ds, deliveryOf)
	for i := range out {
		out[i].Error = notify.PublicError(out[i].Error)
	}
	return out
}
