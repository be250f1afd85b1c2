package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"netmon/app/errs"
	"netmon/store"
)

// The routing rules are this package's resource (GET|POST|PUT|DELETE
// /api/v1/alerts/routes): one settings row, changed by compare-and-swap
// with the audit record of the change in the same transaction, then
// handed to the notifier. app/api only translates.

const routesKey = "alerts.routes"

// RoutesDB keeps the rules' row (*store.DB).
type RoutesDB interface {
	GetSetting(ctx context.Context, key string) (string, error)
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

// RouteLoader reads the stored rules (*RouteRows).
type RouteLoader interface {
	Load(ctx context.Context) ([]Route, error)
}

// RouteRows reads the rules' row; the notifier loads its rules from it
// at Start, apart from the service that changes them.
type RouteRows struct{ db RoutesDB }

// NewRouteRows returns the rows over db.
func NewRouteRows(db RoutesDB) *RouteRows { return &RouteRows{db: db} }

// Load reads the stored routing rules (none when unset).
func (r *RouteRows) Load(ctx context.Context) ([]Route, error) {
	rs, _, err := r.load(ctx)
	return rs, err
}

// load returns the rules and the row as read (nil: absent), the "old"
// value of the compare-and-swap.
func (r *RouteRows) load(ctx context.Context) ([]Route, *string, error) {
	doc, err := r.db.GetSetting(ctx, routesKey)
	if errors.Is(err, store.ErrNotFound) {
		return []Route{}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("load alert routes: %w", err)
	}
	var rs []Route
	if err := json.Unmarshal([]byte(doc), &rs); err != nil {
		return nil, nil, fmt.Errorf("load alert routes: %w", err)
	}
	return rs, &doc, nil
}

// Auditor builds audit records: app/audit's Builder, handed in by
// app/hub.
type Auditor interface {
	Event(ctx context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent
}

// RouteSetter takes the rules in force after a change (*Notifier).
type RouteSetter interface {
	SetRoutes(rs []Route)
}

// The audit vocabulary of the rules (app/audit lists every action).
const (
	ActionRouteCreate = "alert.route.create"
	ActionRouteUpdate = "alert.route.update"
	ActionRouteDelete = "alert.route.delete"
	resultOK          = "ok"
)

// saveAttempts bounds the retries of a change that lost a race with
// another hub's: the change is computed again over the rules that won.
const saveAttempts = 10

// RouteService lists and changes the routing rules.
type RouteService struct {
	rows     *RouteRows
	auditor  Auditor
	notifier RouteSetter
}

// NewRouteService returns the service over rows; notifier (nil: none)
// gets the rules after every change.
func NewRouteService(rows *RouteRows, a Auditor, notifier RouteSetter) *RouteService {
	return &RouteService{rows: rows, auditor: a, notifier: notifier}
}

// List returns the stored rules, in order.
func (s *RouteService) List(ctx context.Context) ([]Route, error) {
	return s.rows.Load(ctx)
}

// ValidateRoute refuses a rule the notifier cannot use, naming the field.
func ValidateRoute(r Route) error {
	if r.MinSeverity < 0 || r.MinSeverity > 10 {
		return errs.InvalidField("min_severity", "must be 0-10")
	}
	for _, c := range r.Channels {
		if !slices.Contains(Channels, c) {
			return errs.InvalidField("channels", "unknown channel %q (want one of %v)", c, Channels)
		}
	}
	return nil
}

// Create stores r as a new rule after the others, with the next free id.
func (s *RouteService) Create(ctx context.Context, who store.AuditActor, r Route) (Route, error) {
	if err := ValidateRoute(r); err != nil {
		return Route{}, err
	}
	var out Route
	err := s.change(ctx, who, ActionRouteCreate, func(rs []Route) ([]Route, any, any, error) {
		next := 1
		for _, x := range rs {
			if n, err := strconv.Atoi(x.ID); err == nil && n >= next {
				next = n + 1
			}
		}
		out = r
		out.ID = strconv.Itoa(next)
		return append(rs, out), nil, out, nil
	})
	return out, err
}

// Update replaces the rule id by r.
func (s *RouteService) Update(ctx context.Context, who store.AuditActor, id string, r Route) (Route, error) {
	r.ID = id
	if err := ValidateRoute(r); err != nil {
		return Route{}, err
	}
	err := s.change(ctx, who, ActionRouteUpdate, func(rs []Route) ([]Route, any, any, error) {
		i := slices.IndexFunc(rs, func(x Route) bool { return x.ID == id })
		if i < 0 {
			return nil, nil, nil, errs.NotFoundf("no such route")
		}
		old := rs[i]
		rs[i] = r
		return rs, old, r, nil
	})
	return r, err
}

// Delete removes the rule id.
func (s *RouteService) Delete(ctx context.Context, who store.AuditActor, id string) error {
	return s.change(ctx, who, ActionRouteDelete, func(rs []Route) ([]Route, any, any, error) {
		i := slices.IndexFunc(rs, func(x Route) bool { return x.ID == id })
		if i < 0 {
			return nil, nil, nil, errs.NotFoundf("no such route")
		}
		old := rs[i]
		return slices.Delete(rs, i, i+1), old, nil, nil
	})
}

// change is the read-modify-write of the rules with its audit record in
// one transaction, by compare-and-swap on the row: a change that lost a
// race with another hub's is computed again over the rules that won (an
// id not found then is a 404, a new rule takes the next id), after
// saveAttempts it is a conflict. The notifier gets the rules after
// commit.
func (s *RouteService) change(ctx context.Context, who store.AuditActor, action string, change func([]Route) ([]Route, any, any, error)) error {
	for attempt := range saveAttempts {
		rs, old, err := s.rows.load(ctx)
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
		target := "alert_routes"
		if r, ok := after.(Route); ok {
			target += "/" + r.ID
		} else if r, ok := before.(Route); ok {
			target += "/" + r.ID
		}
		ev := s.auditor.Event(ctx, who, action, target, resultOK, "", before, after)
		err = s.rows.db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.SwapSetting(ctx, routesKey, old, string(doc)); err != nil {
				return err
			}
			_, err := tx.AppendAudit(ctx, ev)
			return err
		})
		if errors.Is(err, store.ErrConflict) {
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("save alert routes: %w", err)
		}
		if s.notifier != nil {
			s.notifier.SetRoutes(next)
		}
		return nil
	}
	return errs.Conflictf("the alert routes kept changing during the save (another hub): try again")
}

// backoff waits a random pause growing with attempt (up to about 50 ms)
// before a lost change is tried again, so that racing hubs do not keep
// colliding in step.
func backoff(ctx context.Context, attempt int) error {
	t := time.NewTimer(time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 6))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
