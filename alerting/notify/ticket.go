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
// and Idempotency-Key: netmon-<event id>-<action>.
//
//	open:  {"action":"open","event_id":42,"title":"...","description":"...","severity":9,"kind":"port","key":"...","site":"...","group_id":0,"ts":1764000000}
//	       answered 2xx {"id":"<ticket reference>"}; the reference is stored as the event's ext_ref
//	close: {"action":"close","event_id":42,"ext_ref":"<reference>","resolved_ts":1764000600}
//
// A ticket opens when an event is routed to the channel and closes when
// the event resolves (by an operator or auto-resolve). With incidents
// grouping events, one ticket per group is the next step (not built).

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
	ExtRef     string `json:"ext_ref"`
	ResolvedTS int64  `json:"resolved_ts"`
}

// errNoTicketID is a 2xx answer to an open without a usable id.
var errNoTicketID = errors.New(`ticket answer has no "id"`)

func (n *Notifier) sendTicket(ctx context.Context, s Settings, ev record.AlertEvent) error {
	var body any
	action := "open"
	if ev.State == record.AlertResolved {
		action = "close"
		body = ticketClose{Action: action, EventID: ev.ID, ExtRef: ev.ExtRef, ResolvedTS: ev.ResolvedTS}
	} else {
		body = ticketOpen{Action: action, EventID: ev.ID, Title: "netmon: " + siem.Label(ev.Kind) + ": " + oneLine(ev.Message),
			Description: mailBody(ev), Severity: ev.Severity, Kind: ev.Kind, Key: ev.Key, Site: ev.Site, GroupID: ev.GroupID, TS: ev.TS}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return permanent(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.TicketURL, bytes.NewReader(b))
	if err != nil {
		return permanent(errors.New("bad URL"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "netmon-notify/1")
	req.Header.Set("Idempotency-Key", "netmon-"+strconv.FormatInt(ev.ID, 10)+"-"+action)
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
	if err := n.dep.Store.SetAlertExtRef(ctx, ev.ID, ref); err != nil {
		return fmt.Errorf("store ticket reference: %w", err)
	}
	return nil
}
