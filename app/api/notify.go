package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"netmon/alerting/notify"
	"netmon/app/api/router"
	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/record"
)

// Alert delivery (issue 19): routing rules, the delivery log and the
// "send test" of each channel. The rules are one settings row, written
// with the audit record of the change and then handed to the notifier.

const alertRoutesKey = "alerts.routes"

// Notifier is the delivery side (*notify.Notifier).
type Notifier interface {
	Test(ctx context.Context, channel string) error
	SetRoutes(rs []notify.Route)
	// GroupResolved closes the tickets of an alert group (an incident
	// resolved or closed); it never blocks.
	GroupResolved(id, ts int64) bool
}

// DeliveryLog reads the delivery log (*store.DB).
type DeliveryLog interface {
	Deliveries(ctx context.Context, f store.DeliveryFilter) ([]record.AlertDelivery, error)
}

// LoadAlertRoutes reads the stored routing rules (none when unset).
func LoadAlertRoutes(ctx context.Context, db SettingsStore) ([]notify.Route, error) {
	doc, err := db.GetSetting(ctx, alertRoutesKey)
	if errors.Is(err, store.ErrNotFound) {
		return []notify.Route{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load alert routes: %w", err)
	}
	var rs []notify.Route
	if err := json.Unmarshal([]byte(doc), &rs); err != nil {
		return nil, fmt.Errorf("load alert routes: %w", err)
	}
	return rs, nil
}

func validateRoute(r notify.Route) error {
	if r.MinSeverity < 0 || r.MinSeverity > 10 {
		return errs.InvalidField("min_severity", "must be 0-10")
	}
	for _, c := range r.Channels {
		if !slices.Contains(notify.Channels, c) {
			return errs.InvalidField("channels", "unknown channel %q (want one of %v)", c, notify.Channels)
		}
	}
	return nil
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
	return LoadAlertRoutes(c, s.deps.Settings)
}

func (s *Server) createRoute(c *gin.Context, in *routeBodyIn) (notify.Route, error) {
	r := in.Body
	if err := validateRoute(r); err != nil {
		return notify.Route{}, err
	}
	var out notify.Route
	err := s.changeRoutes(c, audit.ActionAlertRouteCreate, func(rs []notify.Route) ([]notify.Route, any, any, error) {
		next := 1
		for _, x := range rs {
			if n, err := strconv.Atoi(x.ID); err == nil && n >= next {
				next = n + 1
			}
		}
		r.ID = strconv.Itoa(next)
		out = r
		return append(rs, r), nil, r, nil
	})
	return out, err
}

func (s *Server) updateRoute(c *gin.Context, in *routeUpdateIn) (notify.Route, error) {
	r := in.Body
	r.ID = in.ID
	if err := validateRoute(r); err != nil {
		return notify.Route{}, err
	}
	err := s.changeRoutes(c, audit.ActionAlertRouteUpdate, func(rs []notify.Route) ([]notify.Route, any, any, error) {
		i := slices.IndexFunc(rs, func(x notify.Route) bool { return x.ID == in.ID })
		if i < 0 {
			return nil, nil, nil, errs.NotFoundf("no such route")
		}
		old := rs[i]
		rs[i] = r
		return rs, old, r, nil
	})
	return r, err
}

func (s *Server) deleteRoute(c *gin.Context, in *routeIn) (OKResult, error) {
	err := s.changeRoutes(c, audit.ActionAlertRouteDelete, func(rs []notify.Route) ([]notify.Route, any, any, error) {
		i := slices.IndexFunc(rs, func(x notify.Route) bool { return x.ID == in.ID })
		if i < 0 {
			return nil, nil, nil, errs.NotFoundf("no such route")
		}
		old := rs[i]
		return slices.Delete(rs, i, i+1), old, nil, nil
	})
	return OKResult{OK: err == nil}, err
}

// changeRoutes is the read-modify-write of the rules with its audit
// record in one transaction; the notifier gets the result after commit.
func (s *Server) changeRoutes(c *gin.Context, action string, change func([]notify.Route) ([]notify.Route, any, any, error)) error {
	if callerOf(c).SiteBound() {
		return errAlertsGlobal
	}
	alertConfigMu.Lock()
	defer alertConfigMu.Unlock()
	rs, err := LoadAlertRoutes(c, s.deps.Settings)
	if err != nil {
		return err
	}
	next, before, after, err := change(rs)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(next)
	if err != nil {
		return fmt.Errorf("save alert routes: %w", err)
	}
	id := callerOf(c)
	target := "alert_routes"
	if r, ok := after.(notify.Route); ok {
		target += "/" + r.ID
	} else if r, ok := before.(notify.Route); ok {
		target += "/" + r.ID
	}
	ev := audit.Event(c, audit.Actor{Username: id.Username, Role: string(id.Role), ActorType: string(id.Actor)},
		action, target, audit.ResultOK, "", before, after)
	err = s.deps.Settings.InTx(c, func(tx *store.Tx) error {
		if err := tx.PutSetting(c, alertRoutesKey, string(doc)); err != nil {
			return err
		}
		_, err := tx.AppendAudit(c, ev)
		return err
	})
	if err != nil {
		return fmt.Errorf("save alert routes: %w", err)
	}
	if s.deps.Notifier != nil {
		s.deps.Notifier.SetRoutes(next)
	}
	return nil
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
	if !slices.Contains(notify.Channels, in.Channel) {
		return ChannelTestResult{}, errs.InvalidField("channel", "unknown channel %q", in.Channel)
	}
	if s.deps.Notifier == nil {
		return ChannelTestResult{}, errs.Unavailablef(0, "alert delivery is not running")
	}
	res := ChannelTestResult{Channel: in.Channel, OK: true}
	result := audit.ResultOK
	if err := s.deps.Notifier.Test(c, in.Channel); err != nil {
		res.OK, res.Error, result = false, err.Error(), audit.ResultError
	}
	id := callerOf(c)
	ev := audit.Event(c, audit.Actor{Username: id.Username, Role: string(id.Role), ActorType: string(id.Actor)},
		audit.ActionAlertChannelTest, "alert_channels/"+in.Channel, result, res.Error, nil, nil)
	if err := s.deps.Settings.InTx(c, func(tx *store.Tx) error {
		_, err := tx.AppendAudit(c, ev)
		return err
	}); err != nil {
		return ChannelTestResult{}, fmt.Errorf("audit channel test: %w", err)
	}
	return res, nil
}

type deliveriesIn struct {
	Channel string `query:"channel" doc:"only this channel"`
	Status  string `query:"status" enum:"pending,delivered,failed" doc:"only this status"`
	EventID int64  `query:"event" min:"0" doc:"only this event's deliveries (0: any)"`
	Limit   int    `query:"limit" min:"1" max:"1000" default:"100" doc:"newest rows"`
}

func (s *Server) deliveries(c *gin.Context, in *deliveriesIn) ([]record.AlertDelivery, error) {
	if callerOf(c).SiteBound() {
		return nil, errAlertsGlobal
	}
	if s.deps.Deliveries == nil {
		return []record.AlertDelivery{}, nil
	}
	ds, err := s.deps.Deliveries.Deliveries(c, store.DeliveryFilter{Channel: in.Channel, Status: in.Status, EventID: in.EventID, Limit: in.Limit})
	return publicDeliveries(ds), err
}

// publicDeliveries shows each stored error as one of notify's reasons:
// rows written before the reasons existed quote the channel's URL
// (issue 28), and the alert detail shows them to any viewer.
func publicDeliveries(ds []record.AlertDelivery) []record.AlertDelivery {
	for i := range ds {
		ds[i].Error = notify.PublicError(ds[i].Error)
	}
	return ds
}
