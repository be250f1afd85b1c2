package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/record"
)

// AlertStore reads alert events and silences and commits operators'
// changes with their audit records (*store.DB).
type AlertStore interface {
	ListAlertEvents(ctx context.Context, f store.AlertFilter) ([]record.AlertEvent, error)
	AlertEvent(ctx context.Context, id int64) (record.AlertEvent, error)
	AlertSilences(ctx context.Context, now int64) ([]record.AlertSilence, error)
	AlertNotes(ctx context.Context, eventID int64) ([]record.AlertNote, error)
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

// AlertNotifier is the engine's side of an operator's change
// (*alerting.Engine): it keeps the open events and silences in memory.
type AlertNotifier interface {
	StateChanged(ev record.AlertEvent)
	SilencesChanged(ctx context.Context) error
}

// AlertEventShort is an item of GET /api/alerts/events: the fields of
// spec 2.6.
type AlertEventShort struct {
	ID       int64  `json:"id"`
	TS       int64  `json:"ts"`
	Kind     string `json:"kind"`
	Key      string `json:"key"`
	Message  string `json:"message"`
	Severity int    `json:"severity"`
	State    string `json:"state"`
	Site     string `json:"site"`
	Count    int64  `json:"count"`
	GroupID  int64  `json:"group_id"`
	ExtRef   string `json:"ext_ref"`
	AgentID  int64  `json:"agent_id"`
}

type alertEventsShortIn struct {
	Limit int `query:"limit" min:"1" max:"1000" default:"50" doc:"most recent events"`
}

func (s *Server) alertEventsShort(c *gin.Context, in *alertEventsShortIn) ([]AlertEventShort, error) {
	evs, err := s.deps.AlertStore.ListAlertEvents(c, store.AlertFilter{Limit: in.Limit, SiteScope: callerOf(c).SiteFilter()})
	if err != nil {
		return nil, err
	}
	out := make([]AlertEventShort, len(evs))
	for i, e := range evs {
		out[i] = AlertEventShort{ID: e.ID, TS: e.TS, Kind: e.Kind, Key: e.Key, Message: e.Message, Severity: e.Severity,
			State: e.State, Site: e.Site, Count: e.Count, GroupID: e.GroupID, ExtRef: e.ExtRef, AgentID: e.AgentID}
	}
	return out, nil
}

type alertEventsIn struct {
	Kind     string `query:"kind" doc:"only this kind (bw, port, proc, target, iface_util, ...)"`
	State    string `query:"state" enum:"firing,ack,resolved" doc:"only this state"`
	Severity int    `query:"severity" min:"0" max:"10" doc:"at least this severity"`
	Site     string `query:"site" doc:"only this site"`
	AgentID  int64  `query:"agent" min:"0" doc:"only this agent's events (0: any)"`
	From     int64  `query:"from" min:"0" doc:"earliest ts, Unix seconds (inclusive)"`
	To       int64  `query:"to" min:"0" doc:"latest ts, Unix seconds (inclusive)"`
	Before   string `query:"before" doc:"cursor: the next_before of the previous page"`
	Limit    int    `query:"limit" min:"1" max:"1000" default:"50" doc:"events per page"`
}

// AlertEventPage is a page of GET /api/v1/alerts/events, newest first.
type AlertEventPage struct {
	Events []AlertEvent `json:"events"`
	// NextBefore is the cursor of the next page ("" on the last page).
	NextBefore string `json:"next_before"`
}

func (s *Server) alertEvents(c *gin.Context, in *alertEventsIn) (AlertEventPage, error) {
	if in.From > 0 && in.To > 0 && in.From > in.To {
		return AlertEventPage{}, invalidField("from", "query parameter \"from\" must not be after \"to\"")
	}
	f := store.AlertFilter{Kind: in.Kind, State: in.State, MinSeverity: in.Severity, Site: in.Site, AgentID: in.AgentID,
		From: in.From, To: in.To, Limit: in.Limit + 1, SiteScope: callerOf(c).SiteFilter()}
	if in.Before != "" {
		ts, id, ok := strings.Cut(in.Before, ":")
		var err1, err2 error
		f.BeforeTS, err1 = strconv.ParseInt(ts, 10, 64)
		f.BeforeID, err2 = strconv.ParseInt(id, 10, 64)
		if !ok || err1 != nil || err2 != nil || f.BeforeTS <= 0 {
			return AlertEventPage{}, invalidField("before", "query parameter \"before\" must be a next_before cursor (<ts>:<id>)")
		}
	}
	evs, err := s.deps.AlertStore.ListAlertEvents(c, f)
	if err != nil {
		return AlertEventPage{}, err
	}
	page := AlertEventPage{Events: convertAll(evs, alertEventOf)}
	if len(evs) > in.Limit {
		page.Events = page.Events[:in.Limit]
		last := page.Events[in.Limit-1]
		page.NextBefore = fmt.Sprintf("%d:%d", last.TS, last.ID)
	}
	return page, nil
}

// AlertEventDetail is an alert event with its notes, oldest first, and
// the route it took: its deliveries (channel, rule, status; no secret).
type AlertEventDetail struct {
	AlertEvent
	Notes      []AlertNote     `json:"notes"`
	Deliveries []AlertDelivery `json:"deliveries"`
}

func (s *Server) alertEvent(c *gin.Context, in *idIn) (AlertEventDetail, error) {
	ev, err := s.deps.AlertStore.AlertEvent(c, in.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && callerOf(c).Visible(ev.Site) != nil) {
		return AlertEventDetail{}, errNoAlertEvent
	}
	if err != nil {
		return AlertEventDetail{}, err
	}
	notes, err := s.deps.AlertStore.AlertNotes(c, in.ID)
	if err != nil {
		return AlertEventDetail{}, err
	}
	deliveries := []record.AlertDelivery{}
	if s.deps.Deliveries != nil {
		if deliveries, err = s.deps.Deliveries.Deliveries(c, store.DeliveryFilter{EventID: in.ID, Limit: 100}); err != nil {
			return AlertEventDetail{}, err
		}
	}
	return AlertEventDetail{AlertEvent: alertEventOf(ev), Notes: convertAll(notes, alertNoteOf), Deliveries: publicDeliveries(deliveries)}, nil
}

// AlertNoteBody is the body of POST /api/v1/alerts/events/{id}/note.
type AlertNoteBody struct {
	Text string `json:"text" jsonschema:"minLength=1,maxLength=4000"`
}

type alertNoteIn struct {
	ID   int64         `path:"id" min:"1" doc:"alert event id"`
	Body AlertNoteBody `body:"json"`
}

// errNoAlertEvent answers an event that does not exist or is another
// site's alike (404).
var errNoAlertEvent = errs.NotFoundf("no such alert event")

// alertChange loads an event in the caller's scope and commits change
// with its audit record; the answer is the event as it is then.
func (s *Server) alertChange(c *gin.Context, id int64, action, detail string, change func(tx *store.Tx, ev record.AlertEvent) (record.AlertEvent, error)) (AlertEvent, error) {
	who := callerOf(c)
	ev, err := s.deps.AlertStore.AlertEvent(c, id)
	if errors.Is(err, store.ErrNotFound) {
		return alertEventOf(ev), errNoAlertEvent
	}
	if err != nil {
		return alertEventOf(ev), err
	}
	if who.Visible(ev.Site) != nil {
		// Another site's event answers exactly as a missing one.
		return alertEventOf(ev), errNoAlertEvent
	}
	err = s.deps.AlertStore.InTx(c, func(tx *store.Tx) error {
		after, err := change(tx, ev)
		if err != nil {
			return err
		}
		rec := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
			action, "alert_events/"+strconv.FormatInt(id, 10), audit.ResultOK, detail, ev, after)
		_, err = tx.AppendAudit(c, rec)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return alertEventOf(ev), errNoAlertEvent
	}
	if err != nil {
		return alertEventOf(ev), err
	}
	after, err := s.deps.AlertStore.AlertEvent(c, id)
	if err != nil {
		return alertEventOf(ev), err
	}
	if s.deps.AlertEngine != nil {
		s.deps.AlertEngine.StateChanged(after)
	}
	return alertEventOf(after), nil
}

func (s *Server) ackAlert(c *gin.Context, in *idIn) (AlertEvent, error) {
	return s.alertChange(c, in.ID, audit.ActionAlertAck, "", func(tx *store.Tx, ev record.AlertEvent) (record.AlertEvent, error) {
		if ev.State != record.AlertFiring {
			return ev, errs.Conflictf("only a firing event can be acknowledged; this one is %s", ev.State)
		}
		ev.State = record.AlertAck
		return ev, tx.SetAlertState(c, ev.ID, record.AlertAck, 0)
	})
}

func (s *Server) resolveAlert(c *gin.Context, in *idIn) (AlertEvent, error) {
	return s.alertChange(c, in.ID, audit.ActionAlertResolve, "", func(tx *store.Tx, ev record.AlertEvent) (record.AlertEvent, error) {
		if ev.State == record.AlertResolved {
			return ev, errs.Conflictf("the event is already resolved")
		}
		ev.State, ev.ResolvedTS = record.AlertResolved, time.Now().Unix()
		return ev, tx.SetAlertState(c, ev.ID, record.AlertResolved, ev.ResolvedTS)
	})
}

func (s *Server) noteAlert(c *gin.Context, in *alertNoteIn) (AlertEvent, error) {
	text := strings.TrimSpace(in.Body.Text)
	if text == "" || len(text) > 4000 {
		return AlertEvent{}, invalidField("text", "text must be 1 to 4000 characters")
	}
	return s.alertChange(c, in.ID, audit.ActionAlertNote, text, func(tx *store.Tx, ev record.AlertEvent) (record.AlertEvent, error) {
		_, err := tx.AddAlertNote(c, record.AlertNote{EventID: ev.ID, TS: time.Now().Unix(), Author: callerOf(c).Username, Text: text})
		return ev, err
	})
}

// AlertSilenceCreate is the body of POST /api/v1/alerts/silences.
type AlertSilenceCreate struct {
	Kind    string `json:"kind" jsonschema:"description=kind matcher; * matches any run of characters; empty = any"`
	Site    string `json:"site" jsonschema:"description=site matcher (a site-bound caller's site is forced)"`
	Key     string `json:"key" jsonschema:"description=key matcher, e.g. 7|* for everything of agent 7"`
	Start   int64  `json:"start" jsonschema:"description=Unix seconds; 0 = now"`
	End     int64  `json:"end" jsonschema:"description=Unix seconds, after start and in the future"`
	Comment string `json:"comment" jsonschema:"maxLength=1000"`
}

type silenceCreateIn struct {
	Body AlertSilenceCreate `body:"json"`
}

type silencesIn struct {
	All bool `query:"all" doc:"include silences that have ended"`
}

func (s *Server) listSilences(c *gin.Context, in *silencesIn) ([]AlertSilence, error) {
	now := time.Now().Unix()
	if in.All {
		now = 0
	}
	list, err := s.deps.AlertStore.AlertSilences(c, now)
	if err != nil {
		return nil, err
	}
	who := callerOf(c)
	out := []AlertSilence{}
	for _, sl := range list {
		if who.Visible(sl.Site) == nil {
			out = append(out, alertSilenceOf(sl))
		}
	}
	return out, nil
}

func (s *Server) createSilence(c *gin.Context, in *silenceCreateIn) (AlertSilence, error) {
	who := callerOf(c)
	now := time.Now().Unix()
	b := in.Body
	sl := record.AlertSilence{Kind: b.Kind, Site: who.PinSite(b.Site), Key: b.Key, Start: b.Start, End: b.End,
		Comment: b.Comment, CreatedBy: who.Username, CreatedAt: now}
	if sl.Start == 0 {
		sl.Start = now
	}
	switch {
	case sl.End <= sl.Start:
		return alertSilenceOf(sl), invalidField("end", "end must be after start")
	case sl.End <= now:
		return alertSilenceOf(sl), invalidField("end", "end must be in the future")
	case len(sl.Comment) > 1000:
		return alertSilenceOf(sl), invalidField("comment", "comment must be at most 1000 characters")
	case len(sl.Kind) > 64 || len(sl.Site) > 128 || len(sl.Key) > 512:
		return alertSilenceOf(sl), invalidField("key", "matchers are at most 64 (kind), 128 (site) and 512 (key) characters")
	}
	ev := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
		audit.ActionAlertSilenceCreate, "alert_silences", audit.ResultOK, "", nil, sl)
	err := s.deps.AlertStore.InTx(c, func(tx *store.Tx) error {
		var err error
		if sl.ID, err = tx.InsertAlertSilence(c, sl); err != nil {
			return err
		}
		ev.Target = "alert_silences/" + strconv.FormatInt(sl.ID, 10)
		_, err = tx.AppendAudit(c, ev)
		return err
	})
	if err != nil {
		return AlertSilence{}, err
	}
	s.silencesChanged(c)
	return alertSilenceOf(sl), nil
}

func (s *Server) deleteSilence(c *gin.Context, in *idIn) (OKResult, error) {
	who := callerOf(c)
	list, err := s.deps.AlertStore.AlertSilences(c, 0)
	if err != nil {
		return OKResult{}, err
	}
	var found *record.AlertSilence
	for i := range list {
		if list[i].ID == in.ID {
			found = &list[i]
		}
	}
	if found == nil || who.Visible(found.Site) != nil {
		return OKResult{}, errs.NotFoundf("no such silence")
	}
	ev := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
		audit.ActionAlertSilenceDelete, "alert_silences/"+strconv.FormatInt(in.ID, 10), audit.ResultOK, "", *found, nil)
	err = s.deps.AlertStore.InTx(c, func(tx *store.Tx) error {
		if err := tx.DeleteAlertSilence(c, in.ID); err != nil {
			return err
		}
		_, err := tx.AppendAudit(c, ev)
		return err
	})
	if err != nil {
		return OKResult{}, err
	}
	s.silencesChanged(c)
	return OKResult{OK: true}, nil
}

// silencesChanged has the engine re-read the silences; the change is
// stored, so a failure here only delays it to the engine's next refresh.
func (s *Server) silencesChanged(c *gin.Context) {
	if s.deps.AlertEngine == nil {
		return
	}
	if err := s.deps.AlertEngine.SilencesChanged(c); err != nil {
		s.log.WarnContext(c, "reload alert silences", "error", err)
	}
}
