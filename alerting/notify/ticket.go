package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"netmon/alerting/siem"
	"netmon/store/record"
)

// The ticket channel speaks a generic ITSM webhook (README "Alert
// delivery"): POST ticket_url with Authorization: Bearer ticket_token
// and Idempotency-Key: netmon-<event id>-<action> (a group's open:
// netmon-group-<group id>-open).
//
//	open:  {"action":"open","event_id":42,"title":"...","description":"...","severity":9,"kind":"port","key":"...","site":"...","group_id":0,"ts":1764000000}
//	       answered 2xx {"id":"<ticket reference>"}; the reference is stored as ext_ref of the event, or of every member of its group
//	close: {"action":"close","event_id":42,"group_id":0,"ext_ref":"<reference>","resolved_ts":1764000600}
//
// One ticket per alert group (group.go): the first member routed to the
// channel opens it; the others find the reference and send nothing.

type ticketOpen struct {
	Action      string `json:"action"`
	EventID     int64  `json:"event_id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Severity    int    `json:"severity"`
	Kind        string `json:"kind"`
	Key         string `json:"key"`
	Site        string `json:"site"`
	GroupID     int64  `json:"group_id"`
	TS          int64  `json:"ts"`
}

type ticketClose struct {
	Action     string `json:"action"`
	EventID    int64  `json:"event_id"`
	GroupID    int64  `json:"group_id"`
	ExtRef     string `json:"ext_ref"`
	ResolvedTS int64  `json:"resolved_ts"`
}

// errNoTicketID is a 2xx answer to an open without a usable id.
var errNoTicketID = errors.New(`ticket answer has no "id"`)

func (n *Notifier) sendTicket(ctx context.Context, s Settings, ev record.AlertEvent) error {
	var body any
	action, idem := "open", "netmon-"+strconv.FormatInt(ev.ID, 10)+"-open"
	if ev.State == record.AlertResolved {
		action, idem = "close", "netmon-"+strconv.FormatInt(ev.ID, 10)+"-close"
		body = ticketClose{Action: action, EventID: ev.ID, GroupID: ev.GroupID, ExtRef: ev.ExtRef, ResolvedTS: ev.ResolvedTS}
	} else {
		if ev.ID > 0 { // not the "send test" event
			// The group is read as stored now: the correlator may have
			// grouped the event since it was routed.
			stored, err := n.dep.Store.AlertEvent(ctx, ev.ID)
			if err != nil {
				return fmt.Errorf("%w: read alert event: %w", errStore, err)
			}
			if stored.ExtRef != "" {
				return nil // its group's ticket is open already
			}
			ev.GroupID = stored.GroupID
		}
		if ev.GroupID > 0 {
			unlock := n.groupLocks.lock(ev.GroupID)
			defer unlock()
			ref, err := n.dep.Store.GroupExtRef(ctx, ev.GroupID)
			if err != nil {
				return err
			}
			if ref != "" {
				return n.dep.Store.SetGroupExtRef(ctx, ev.GroupID, ref)
			}
			idem = "netmon-group-" + strconv.FormatInt(ev.GroupID, 10) + "-open"
		}
		body = ticketOpen{Action: action, EventID: ev.ID, Title: "netmon: " + siem.Label(ev.Kind) + ": " + oneLine(ev.Message),
			Description: mailBody(ev), Severity: ev.Severity, Kind: ev.Kind, Key: ev.Key, Site: ev.Site, GroupID: ev.GroupID, TS: ev.TS}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return permanent(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.TicketURL, bytes.NewReader(b))
	if err != nil {
		return permanent(errBadURL)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "netmon-notify/1")
	req.Header.Set("Idempotency-Key", idem)
	if s.TicketToken != "" {
		req.Header.Set("Authorization", "Bearer "+s.TicketToken)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return classify(err)
	}
	defer resp.Body.Close()
	// The answer is read for the reference only; it is never logged.
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch st := resp.StatusCode; {
	case st/100 == 2:
	case st == http.StatusRequestTimeout || st == http.StatusTooManyRequests || st >= 500:
		return httpStatusError{st}
	default:
		return permanent(httpStatusError{st})
	}
	if action == "close" {
		return nil
	}
	var ans struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &ans) != nil || len(ans.ID) == 0 {
		return permanent(errNoTicketID)
	}
	ref := string(ans.ID)
	var s2 string
	if json.Unmarshal(ans.ID, &s2) == nil {
		ref = s2
	}
	if ref == "" || len(ref) > 200 {
		return permanent(errNoTicketID)
	}
	if ev.GroupID > 0 {
		if err := n.dep.Store.SetGroupExtRef(ctx, ev.GroupID, ref); err != nil {
			return fmt.Errorf("%w: store ticket reference: %w", errStore, err)
		}
		return nil
	}
	if ev.ID == 0 {
		return nil
	}
	if err := n.dep.Store.SetAlertExtRef(ctx, ev.ID, ref); err != nil {
		return fmt.Errorf("%w: store ticket reference: %w", errStore, err)
	}
	return nil
}
